package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
)

// treesRoot holds the generated MicroShift-like trees (internal/testing/fixtures.TreesDir), each based
// on an OpenShift nightly pair named by its scripts/auto-rebase/last_rebase.sh.
const treesRoot = "../../../testdata/microshift-trees"

func readLockFile(t *testing.T, dir string) *lock.Lock {
	t.Helper()
	l, err := lock.Read(filepath.Join(dir, filepath.FromSlash(lock.Path)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestEndToEndTrees is the plain run a maintainer does on a branch: no --ocp (the tree's
// release.base gives it), payloads from last_rebase.sh, the LVMS minor from the policy
// (5.0 and 4.22 lag to 4.21 with a warning). Golden tree, no-op second run (at most a line
// per step on stderr), --check with no flags.
func TestEndToEndTrees(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase per tree")
	}
	e := newE2E(t)
	for _, tc := range []struct {
		minor, lvms, rule, warn string
	}{
		{"4.17", "4.17", "exact", ""},
		{"4.22", "4.21", "newest-below", "no LVMS 4.22 bundle is published; using LVMS 4.21"},
		{"5.0", "4.21", "newest-below", "no LVMS 5.0 bundle is published; using LVMS 4.21"},
	} {
		t.Run(tc.minor, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, filepath.Join(treesRoot, tc.minor))
			specs := lastRebaseSpecs(t, dir)
			presubmit(t, dir)
			code, out, errOut := e.run(dir)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			presubmit(t, dir)
			// The lag warning is printed once, on stderr where it arose; the summary does not
			// repeat it.
			if tc.warn != "" {
				checkWarnedOnce(t, "OpenShift "+tc.minor+": "+tc.warn, out, errOut)
			}
			if !strings.Contains(out, "payloads by rule tree (scripts/auto-rebase/last_rebase.sh)") {
				t.Errorf("stdout does not say the payloads came from last_rebase.sh:\n%s", out)
			}
			compareGolden(t, "tree-"+tc.minor, dir)
			checkOwnRecords(t, filepath.Join(treesRoot, tc.minor), dir)
			l := readLockFile(t, dir)
			if l.OCP != tc.minor || l.LVMS == nil || l.LVMS.Minor != tc.lvms || l.LVMS.Rule != tc.rule || l.LVMS.Reason == "" ||
				l.PayloadRule != "tree" || l.PayloadSource != "scripts/auto-rebase/last_rebase.sh" {
				t.Errorf("lock: ocp %s lvms %+v payloadRule %q source %q", l.OCP, l.LVMS, l.PayloadRule, l.PayloadSource)
			}
			for _, p := range l.Payloads {
				if p.Ref != specs[p.Arch] {
					t.Errorf("lock payload %s = %s, want last_rebase.sh's %s", p.Arch, p.Ref, specs[p.Arch])
				}
			}
			before := treeHash(t, dir)
			if code, out, errOut = e.run(dir); code != 0 || !strings.Contains(out, "no changes") {
				t.Fatalf("second run: exit %d, want 0 and \"no changes\"\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if treeHash(t, dir) != before {
				t.Fatal("second run changed the tree")
			}
			// What make demo's second run prints: a line per step, the warnings once, no logfmt.
			checkNoChangeStderr(t, errOut)
			if code, out, errOut = e.run(dir, "--check"); code != 0 {
				t.Fatalf("--check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}

// checkOwnRecords: the run updated the tree's own bundle record and LVMS recipe (a 4.17 tree
// keeps last_lvms_rebase.sh and lvms_assets.yaml) and added no record of another name.
func checkOwnRecords(t *testing.T, src, dir string) {
	t.Helper()
	before, after := readTree(t, src), readTree(t, dir)
	for _, name := range []string{"last_rebase_lvms.sh", "last_lvms_rebase.sh", "assets_lvms.yaml", "lvms_assets.yaml"} {
		p := "scripts/auto-rebase/" + name
		switch {
		case before[p] == nil && after[p] != nil:
			t.Errorf("the run added %s, which the tree did not have", p)
		case before[p] != nil && bytes.Equal(before[p], after[p]):
			t.Errorf("the run left the tree's own %s as it was", p)
		}
	}
	if rec := after["scripts/auto-rebase/last_lvms_rebase.sh"]; rec != nil && !strings.Contains(string(rec), "rebase-lvms.sh to ") {
		t.Errorf("last_lvms_rebase.sh lost its own script path:\n%s", rec)
	}
}

func lastRebaseSpecs(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "scripts/auto-rebase/last_rebase.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, w := range strings.Fields(string(data))[4:] {
		out[[]string{"x86_64", "aarch64"}[i]] = strings.Trim(w, `"`)
	}
	return out
}

// TestEndToEndPayloadNewest: --payload newest on a 4.22 tree takes the newest z published
// for both arches (4.22.1; 4.22.2 is x86_64 only), warns about the newer one, records the
// rule, and --check still needs no flags.
func TestEndToEndPayloadNewest(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, filepath.Join(treesRoot, "4.22"))
	code, out, errOut := e.run(dir, "--ocp", "4.22", "--payload", "newest")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// Both warnings (the newer z, the lagging LVMS minor) once each, on stderr.
	checkWarnedOnce(t, "4.22.2 (x86_64 only); using 4.22.1, the newest z published for x86_64 and aarch64", out, errOut)
	checkWarnedOnce(t, "OpenShift 4.22: no LVMS 4.22 bundle is published; using LVMS 4.21", out, errOut)
	l := readLockFile(t, dir)
	if l.PayloadRule != "newest" || l.PayloadVersion != "4.22.1" || len(l.Payloads) != 2 {
		t.Fatalf("lock: rule %q version %q payloads %+v", l.PayloadRule, l.PayloadVersion, l.Payloads)
	}
	for _, p := range l.Payloads {
		if p.Version != "4.22.1" || p.Ref != "quay.io/openshift-release-dev/ocp-release:4.22.1-"+p.Arch {
			t.Errorf("payload %+v, want 4.22.1-%s", p, p.Arch)
		}
	}
	if code, out, errOut = e.run(dir, "--check"); code != 0 {
		t.Fatalf("--check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestTreeUsageErrors: an --ocp that contradicts the tree, --payload tree without
// last_rebase.sh, and a bad --lvms are usage errors (exit 2) that write nothing.
func TestTreeUsageErrors(t *testing.T) {
	e := newE2E(t)
	for _, tc := range []struct {
		name, tree string
		rm         string
		args       []string
		want       []string
	}{
		{"ocp differs from the tree", "5.0", "", []string{"--ocp", "4.22"},
			[]string{"--ocp 4.22 differs from the tree's OpenShift 5.0", "5.0.0-0.nightly-2026-07-23-224236", "--allow-base-mismatch"}},
		{"payload tree without last_rebase.sh", "5.0", "scripts/auto-rebase/last_rebase.sh", []string{"--payload", "tree"},
			[]string{"--payload tree", "last_rebase.sh"}},
		{"bad --payload", "5.0", "", []string{"--payload", "latest"}, []string{`--payload "latest": expected tree or newest`}},
		{"bad --lvms", "5.0", "", []string{"--lvms", "four"}, []string{`--lvms "four": expected X.Y`}},
		{"no release JSON and no --ocp", "5.0", "assets/release/release-x86_64.json", nil, []string{"--ocp X.Y not given"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, filepath.Join(treesRoot, tc.tree))
			if tc.rm != "" {
				if err := os.Remove(filepath.Join(dir, tc.rm)); err != nil {
					t.Fatal(err)
				}
			}
			before := treeHash(t, dir)
			code, out, errOut := e.run(dir, tc.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if treeHash(t, dir) != before {
				t.Error("a usage error changed the tree")
			}
		})
	}
}

// TestResolveLaggingLVMS: resolve --ocp 4.22 and 5.0 show LVMS 4.21 and why, as text and
// JSON; each warning (the lag, a payload published for x86_64 only) is printed once, on
// stderr, at the default verbosity and with -q, and -q leaves resolve's answer on stdout.
func TestResolveLaggingLVMS(t *testing.T) {
	e := newE2E(t)
	dir := t.TempDir()
	args := func(ocp string, extra ...string) []string {
		a := []string{"resolve", "--ocp", ocp, "-a", e.authFile, "--cache-dir", dir, "--insecure-registry", e.reg.Host()}
		return append(append(a, e.reg.MirrorFlags()...), extra...)
	}
	for _, tc := range []struct {
		ocp, payload string
		flags        []string
	}{
		{"5.0", "5.0.1", nil},
		{"5.0", "5.0.1", []string{"-q"}},
		{"4.22", "4.22.1", nil},
		{"4.22", "4.22.1", []string{"--quiet"}},
	} {
		t.Run(tc.ocp+strings.Join(tc.flags, ""), func(t *testing.T) {
			code, out, errOut := runMain(t, args(tc.ocp, tc.flags...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			for _, w := range []string{"lvms     4.21 (newest-below: no LVMS " + tc.ocp + " bundle is published; 4.21 is the newest published LVMS minor below it)",
				"bundle   registry.redhat.io/lvms4/lvms-operator-bundle:v4.21.1-4", "version " + tc.payload} {
				if !strings.Contains(out, w) {
					t.Errorf("resolve output lacks %q:\n%s", w, out)
				}
			}
			checkWarnedOnce(t, "OpenShift "+tc.ocp+": no LVMS "+tc.ocp+" bundle is published; using LVMS 4.21", out, errOut)
			checkWarnedOnce(t, tc.ocp+".2 (x86_64 only)", out, errOut)
			if len(tc.flags) > 0 {
				checkOnlyWarnings(t, errOut)
			} else if strings.Contains(errOut, "level=") {
				t.Errorf("default verbosity: logfmt records on stderr, want plain lines:\n%s", errOut)
			}
		})
	}
	code, out, errOut := runMain(t, args("5.0", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res struct {
		LVMS     struct{ Minor, Rule, Reason, Warning string }
		Bundle   struct{ Ref string }
		Warnings []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.LVMS.Minor != "4.21" || res.LVMS.Rule != "newest-below" || !strings.Contains(res.LVMS.Reason, "no LVMS 5.0 bundle") || !strings.HasSuffix(res.Bundle.Ref, ":v4.21.1-4") {
		t.Errorf("json lvms %+v bundle %s", res.LVMS, res.Bundle.Ref)
	}
	// -o json carries the warnings as data, each once.
	if n := countIn(res.Warnings, "no LVMS 5.0 bundle is published"); n != 1 {
		t.Errorf("-o json: the lag warning is in warnings %d times, want 1: %q", n, res.Warnings)
	}
	// --lvms forces another minor.
	code, out, _ = runMain(t, args("5.0", "--lvms", "4.20", "-o", "json")...)
	if code != 0 || !strings.Contains(out, `"rule": "flag"`) || !strings.Contains(out, "v4.20.2-5") {
		t.Errorf("--lvms 4.20: exit %d\n%s", code, out)
	}
}

// checkWarnedOnce fails unless warning is printed exactly once: on stderr, as a "Warning: "
// line, and not again in the summary on stdout.
func checkWarnedOnce(t *testing.T, warning, out, errOut string) {
	t.Helper()
	if n, m := strings.Count(out, warning), strings.Count(errOut, warning); n != 0 || m != 1 {
		t.Errorf("warning %q printed %d times on stdout and %d on stderr, want once on stderr:\nstdout:\n%s\nstderr:\n%s", warning, n, m, out, errOut)
	}
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, warning) && !strings.HasPrefix(line, "Warning: ") {
			t.Errorf("warning printed as %q, want a Warning: line", line)
		}
	}
}

// checkOnlyWarnings fails on a stderr line that is not a warning or an error (-q).
func checkOnlyWarnings(t *testing.T, errOut string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if line != "" && !strings.HasPrefix(line, "Warning: ") && !strings.HasPrefix(line, "Error: ") {
			t.Errorf("stderr line %q is neither a warning nor an error", line)
		}
	}
}

func countIn(list []string, sub string) int {
	n := 0
	for _, s := range list {
		n += strings.Count(s, sub)
	}
	return n
}

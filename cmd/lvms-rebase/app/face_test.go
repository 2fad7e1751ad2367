package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/rebase/review"
)

// runSteps are the steps of a rebase (docs/design.md), as stderr names them.
var runSteps = []string{"resolve", "fetch-payloads", "verify-bundle", "verify-payloads", "translate", "render-lvms", "snapshot-assets", "render", "images", "provenance", "records", "review", "write"}

// stepLine returns the step a plain stderr line reports the end of ("render          262ms"),
// or "" when the line is no such line.
func stepLine(line string) string {
	f := strings.Fields(line)
	if len(f) != 2 || !slices.Contains(runSteps, f[0]) || !strings.HasPrefix(line, f[0]+strings.Repeat(" ", 16-len(f[0]))) {
		return ""
	}
	if _, err := time.ParseDuration(f[1]); err != nil {
		return ""
	}
	return f[0]
}

// hasStepLine reports whether errOut has the end line of step.
func hasStepLine(errOut, step string) bool {
	for _, line := range strings.Split(errOut, "\n") {
		if stepLine(line) == step {
			return true
		}
	}
	return false
}

// checkPlainStderr fails unless stderr is plain lines: no logfmt or JSON record, each step's
// end line at most once, each warning once as "Warning: …" and no security review rule
// one by one (they are counted on one line); it returns the step and warning lines.
func checkPlainStderr(t *testing.T, errOut string) (steps, warnings []string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		switch {
		case line == "":
		case strings.Contains(line, "level=") || strings.Contains(line, "msg=") || strings.HasPrefix(line, "{"):
			t.Errorf("stderr has a log record, want plain lines: %q", line)
		case stepLine(line) != "":
			if slices.Contains(steps, stepLine(line)) {
				t.Errorf("step line %q printed twice", line)
			}
			steps = append(steps, stepLine(line))
		case strings.HasPrefix(line, "Warning: "):
			if slices.Contains(warnings, line) {
				t.Errorf("warning printed twice: %q", line)
			}
			if strings.HasPrefix(line, "Warning: "+review.EscalationPrefix) && strings.Contains(line, " grants ") {
				t.Errorf("a security review rule printed by itself at the default verbosity: %q", line)
			}
			warnings = append(warnings, line)
		default:
			t.Errorf("stderr line %q is neither a step's line nor a warning", line)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", errOut)
	}
	return steps, warnings
}

// checkNoChangeStderr: a run that changes nothing prints at most one line per step (its end,
// with the time it worked), no log records, and no warning: what the era declares (a lagging
// LVMS minor the lock records, the namespace a CSV suggests) is a fact, not news.
func checkNoChangeStderr(t *testing.T, errOut string) {
	t.Helper()
	steps, warnings := checkPlainStderr(t, errOut)
	if len(steps) == 0 || len(steps) > len(runSteps) {
		t.Errorf("%d step lines, want 1 to %d:\n%s", len(steps), len(runSteps), errOut)
	}
	if len(warnings) > 0 {
		t.Errorf("a run that changes nothing warns:\n%s", strings.Join(warnings, "\n"))
	}
}

// TestFirstRunFace is make demo's first run (the 5.0 tree, no LVMS assets yet, 35 warnings
// before plain lines): stderr is one line per step and each distinct warning once, the
// security review's rules counted on one line; -v 1 prints each rule, once, as many as
// -o json's rbac.escalations; the summary counts what is not shipped on one line (-v 1 lists
// each); -o json's warnings list each distinct warning once.
func TestFirstRunFace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
	code, out, errOut := e.run(dir, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	steps, warnings := checkPlainStderr(t, errOut)
	if len(steps) != len(runSteps) {
		t.Errorf("steps %q, want each of %q once", steps, runSteps)
	}
	var res struct {
		Warnings []string
		Excluded []any
		RBAC     struct{ Escalations []review.Finding }
	}
	code, jsonOut, _ := e.run(dir, "--dry-run", "-o", "json")
	if err := json.Unmarshal([]byte(jsonOut), &res); code != 0 || err != nil {
		t.Fatalf("-o json: exit %d, %v", code, err)
	}
	n := len(res.RBAC.Escalations)
	if n < 2 || len(res.Excluded) < 2 {
		t.Fatalf("the demo tree should need a security review of several rules and leave several bundle objects out: %d, %d", n, len(res.Excluded))
	}
	summary := "Warning: " + review.EscalationPrefix + strconv.Itoa(n) + " RBAC rules grant access a reviewer must check"
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, summary) }) {
		t.Errorf("no line %q among the warnings:\n%s", summary, errOut)
	}
	for i, w := range res.Warnings {
		if slices.Contains(res.Warnings[:i], w) {
			t.Errorf("-o json lists the warning %q twice", w)
		}
	}
	if !strings.Contains(out, "  not shipped: "+strconv.Itoa(len(res.Excluded))+" bundle objects, by the era's rules (-v 1 lists them)\n") ||
		strings.Count(out, "not shipped") != 1 {
		t.Errorf("the summary should count what is not shipped on one line:\n%s", out)
	}

	code, out, errOut = e.run(dir, "--dry-run", "-v", "1")
	if code != 0 {
		t.Fatalf("-v 1: exit %d\n%s", code, errOut)
	}
	for _, f := range res.RBAC.Escalations {
		if c := strings.Count(errOut, "Warning: "+f.Warning()+"\n"); c != 1 {
			t.Errorf("-v 1 prints %q %d times, want once", f.Warning(), c)
		}
	}
	if strings.Contains(errOut, summary) || strings.Count(out, "  not shipped: ") != len(res.Excluded) {
		t.Errorf("-v 1 should list each rule and each object not shipped, not count them:\n%s\n%s", out, errOut)
	}
}

// TestDiffIsAPatch: --diff prints the patch and nothing else on stdout: git apply takes it
// as it is, and the tree it gives is the tree a write gives; the count of changes is on
// stderr. A tree with nothing to change gives an empty stdout.
func TestDiffIsAPatch(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	e := newE2E(t)
	src := filepath.Join(treesRoot, "5.0")
	patched, written := copyTree(t, src), copyTree(t, src)
	code, patch, errOut := e.run(patched, "--diff")
	if code != ExitDrift {
		t.Fatalf("--diff: exit %d, want %d\n%s", code, ExitDrift, errOut)
	}
	if !strings.HasPrefix(patch, "diff --git a/") {
		t.Fatalf("stdout does not start with the patch:\n%.300s", patch)
	}
	for _, s := range []string{"would write:", "OpenShift ", "fetched ", "took "} {
		if strings.Contains(patch, "\n"+s) {
			t.Errorf("stdout carries the summary (%q), want the patch alone", s)
		}
	}
	if !strings.Contains(errOut, "\nwould write: ") {
		t.Errorf("stderr lacks the count of changes:\n%s", errOut)
	}
	git := exec.Command("git", "apply", "--whitespace=nowarn", "-")
	git.Dir, git.Stdin = patched, strings.NewReader(patch)
	git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	if b, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s", err, b)
	}
	if code, out, errOut := e.run(written); code != 0 {
		t.Fatalf("write: exit %d\n%s\n%s", code, out, errOut)
	}
	if treeHash(t, patched) != treeHash(t, written) {
		t.Error("the tree git apply made from --diff's stdout is not the tree a write makes")
	}
	code, patch, _ = e.run(written, "--diff")
	if code != ExitOK || patch != "" {
		t.Errorf("--diff on an up-to-date tree: exit %d, stdout %q; want 0 and nothing", code, patch)
	}
	// With --log-format json every stderr line is a JSON record, the count of changes too.
	code, patch, errOut = e.run(written, "--diff", "--log-format", "json")
	if code != ExitOK || patch != "" || !strings.Contains(errOut, `"msg":"no changes (`) {
		t.Errorf("--diff --log-format json on an up-to-date tree: exit %d, stdout %q; want 0, nothing and the count on stderr\n%s", code, patch, errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("--diff --log-format json: a stderr line is no JSON record: %q", line)
		}
	}
}

package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
)

// TestGoldenRecipes holds the recipe invariant for every era's golden tree: every file of
// the two component directories is listed in its recipe, and every entry exists or is ignored.
func TestGoldenRecipes(t *testing.T) {
	entries, err := os.ReadDir(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < len(eraCases) {
		t.Fatalf("%d golden trees, want at least one per era case (%d)", len(entries), len(eraCases))
	}
	for _, d := range entries {
		t.Run(d.Name(), func(t *testing.T) {
			if err := recipe.Check(filepath.Join(goldenRoot, d.Name()), recipe.RecipeFiles, recipe.Components); err != nil {
				t.Error(err)
			}
		})
	}
}

// presubmit runs hack/verify-recipes.py (MicroShift's presubmit.py logic) on a whole tree
// when python3 with PyYAML is installed; .ci/run installs it.
func presubmit(t *testing.T, dir string) {
	t.Helper()
	if err := exec.Command("python3", "-c", "import yaml").Run(); err != nil {
		t.Logf("python3 with PyYAML not available (%v): recipe presubmit not run; recipe.Check still is", err)
		return
	}
	out, err := exec.Command("python3", "../../../hack/verify-recipes.py", dir).CombinedOutput()
	if err != nil {
		t.Errorf("recipe presubmit on %s: %v\n%s", dir, err, out)
	}
}

// runJSON runs lvms-rebase with -o json and decodes the result.
func (e *e2e) runJSON(dir string, args ...string) map[string]any {
	e.t.Helper()
	code, out, errOut := e.run(dir, append(args, "-o", "json")...)
	if code != 0 {
		e.t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		e.t.Fatalf("decoding -o json: %v\n%s", err, out)
	}
	return res
}

func planPaths(res map[string]any, key string) []string {
	plan, _ := res["plan"].(map[string]any)
	var out []string
	for _, p := range asSlice(plan[key]) {
		out = append(out, p.(string))
	}
	sort.Strings(out)
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestEvolutionBundle runs a bundle grown like the Subprovisioner enhancement: its new image
// gets a release key and placeholders, its NetworkPolicy is reported as not shipped, the PR
// body names both, the recipes list the new files. Then a respin of the same bundle that
// changes only the lvms-operator digest changes only the lines carrying it.
func TestEvolutionBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase twice")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	presubmit(t, dir)
	pr := filepath.Join(t.TempDir(), "pr.md")
	res := e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch", "--lvms-bundle", fixtures.EvolutionRepo+":"+fixtures.EvolutionTag, "--pr-body", pr)

	var undeclared []string
	for _, img := range asSlice(res["undeclaredImages"]) {
		m := img.(map[string]any)
		undeclared = append(undeclared, m["name"].(string)+"="+m["key"].(string))
	}
	if !strings.Contains(strings.Join(undeclared, " "), "subprovisioner-csi=subprovisioner_csi") {
		t.Errorf("undeclaredImages %v lack subprovisioner-csi", undeclared)
	}
	warnings, _ := json.Marshal(res["warnings"])
	excluded, _ := json.Marshal(res["excluded"])
	if !strings.Contains(string(warnings), "relatedImage subprovisioner-csi") || !strings.Contains(string(excluded), `"kind":"NetworkPolicy"`) {
		t.Errorf("warnings %s / excluded %s do not report the new image and the NetworkPolicy", warnings, excluded)
	}
	body, err := os.ReadFile(pr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`subprovisioner-csi`", "release key `subprovisioner_csi`", "NetworkPolicy `lvms-operator-allow`",
		"listed `assets/components/lvms/subprovisioner-controller_apps_v1_deployment.yaml`"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("PR body lacks %q:\n%s", want, body)
		}
	}

	files := readTree(t, dir)
	for _, rel := range []string{"assets/release/release-x86_64.json", "assets/release/release-aarch64.json"} {
		if !strings.Contains(string(files[rel]), `"subprovisioner_csi": "registry.redhat.io/lvms4/lvms-subprovisioner-csi-rhel9@sha256:`) {
			t.Errorf("%s lacks the subprovisioner_csi key:\n%s", rel, files[rel])
		}
	}
	lvms := "assets/components/lvms/"
	for p, want := range map[string]string{
		lvms + "subprovisioner-controller_apps_v1_deployment.yaml": "image: '{{ .ReleaseImage.subprovisioner_csi }}'",
		lvms + "lvms-operator_apps_v1_deployment.yaml":             "value: '{{ .ReleaseImage.subprovisioner_csi }}'",
		lvms + "lvm.topolvm.io_lvmclusters.yaml":                   "deviceAccessPolicy:",
	} {
		if !strings.Contains(string(files[p]), want) {
			t.Errorf("%s lacks %q", p, want)
		}
	}
	for p, d := range files {
		if strings.HasPrefix(p, "assets/components/") && strings.Contains(string(d), "@sha256:") {
			t.Errorf("%s carries a literal digest", p)
		}
	}
	if err := recipe.Check(dir, recipe.RecipeFiles, recipe.Components); err != nil {
		t.Error(err)
	}
	presubmit(t, dir)

	// The respin: same tag, only the lvms-operator digest differs.
	before := readTree(t, dir)
	res = e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch", "--lvms-bundle", fixtures.RespinRepo+":"+fixtures.EvolutionTag)
	changed := planPaths(res, "change")
	want := []string{"assets/release/release-aarch64.json", "assets/release/release-x86_64.json",
		"scripts/auto-rebase/last_rebase_lvms.sh", "scripts/auto-rebase/lvms-rebase.lock.yaml"}
	if strings.Join(changed, " ") != strings.Join(want, " ") || len(planPaths(res, "add"))+len(planPaths(res, "remove")) > 0 {
		t.Fatalf("respin changed %v (added %v, removed %v), want exactly %v", changed, planPaths(res, "add"), planPaths(res, "remove"), want)
	}
	after := readTree(t, dir)
	for _, rel := range want[:2] {
		for _, l := range changedLines(string(before[rel]), string(after[rel])) {
			if !strings.Contains(l, `"lvms_operator"`) {
				t.Errorf("%s: a line not carrying the lvms-operator digest changed: %s", rel, l)
			}
		}
	}
}

// changedLines returns the lines that differ position by position (the files keep their
// line count when only values change).
func changedLines(a, b string) []string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(al) != len(bl) {
		return []string{"line count changed"}
	}
	var out []string
	for i := range al {
		if al[i] != bl[i] {
			out = append(out, al[i]+" → "+bl[i])
		}
	}
	return out
}

// TestMicroShiftFormattedTree re-runs on a tree whose objects are current but formatted the
// way MicroShift's scripts format them (and that has no lock yet, as a tree the legacy
// scripts maintained): no file changes, only the lock is added. A change of meaning then
// edits only the lines concerned, keeping MicroShift's formatting.
func TestMicroShiftFormattedTree(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase three times")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	restyled := 0
	for p, d := range readTree(t, dir) {
		if !strings.HasPrefix(p, "assets/components/lvms/") || !strings.HasSuffix(p, ".yaml") {
			continue
		}
		out, err := fixtures.MicroShiftStyle(d)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if string(out) != string(d) {
			restyled++
		}
		if err := os.WriteFile(filepath.Join(dir, p), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if restyled < 10 {
		t.Fatalf("only %d files restyled", restyled)
	}
	if err := os.Remove(filepath.Join(dir, "scripts/auto-rebase/lvms-rebase.lock.yaml")); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, dir)
	res := e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	if c, r, a := planPaths(res, "change"), planPaths(res, "remove"), planPaths(res, "add"); len(c)+len(r) > 0 ||
		strings.Join(a, " ") != "scripts/auto-rebase/lvms-rebase.lock.yaml" {
		t.Fatalf("re-run on the MicroShift-formatted tree: changed %v, removed %v, added %v", c, r, a)
	}
	for p, d := range before {
		if after := readTree(t, dir)[p]; string(after) != string(d) {
			t.Errorf("%s changed", p)
		}
	}

	// A hand edit of meaning (a dropped rule) is undone in that place only.
	rel := "assets/components/lvms/vg-manager_rbac.authorization.k8s.io_v1_role.yaml"
	cur := string(before[rel])
	i := strings.Index(cur, "  - apiGroups:")
	j := strings.Index(cur[i+1:], "  - apiGroups:")
	if i < 0 || j < 0 {
		t.Fatalf("%s: no two rules to edit:\n%s", rel, cur)
	}
	edited := cur[:i] + cur[i+1+j:]
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res = e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	if c := planPaths(res, "change"); strings.Join(c, " ") != rel {
		t.Errorf("after the hand edit: changed %v, want only %s", c, rel)
	}
	if got := string(readTree(t, dir)[rel]); got != cur {
		t.Errorf("%s not restored in MicroShift's formatting:\n%s\nwant:\n%s", rel, got, cur)
	}
}

// TestBadRecordsRefused: MicroShift's records are read as what they are — last_rebase.sh as
// bash, the recipes as YAML, release.base as strictly as --ocp — and one that cannot be read
// unambiguously stops the run with an error naming the file and line (or field), before
// anything is fetched or written: the tree stays byte-identical.
func TestBadRecordsRefused(t *testing.T) {
	e := newE2E(t)
	const ga = "quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64 quay.io/openshift-release-dev/ocp-release:5.0.1-aarch64"
	const lastRebase = "scripts/auto-rebase/last_rebase.sh"
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		code int
		want []string
	}{
		{"last_rebase.sh runs rebase.sh twice", func(t *testing.T, dir string) {
			prependLine(t, dir, lastRebase, "./scripts/auto-rebase/rebase.sh to "+ga)
		}, 1, []string{lastRebase, "line 3: a second rebase.sh to command (the first is on line 2)"}},
		{"last_rebase.sh is not bash", func(t *testing.T, dir string) {
			prependLine(t, dir, lastRebase, "./scripts/auto-rebase/rebase.sh to \"unclosed")
		}, 1, []string{lastRebase + ": line 3: column ", "not a bash script: reached EOF without closing quote"}},
		{"recipe does not parse", func(t *testing.T, dir string) {
			appendText(t, dir, "scripts/auto-rebase/assets_lvms.yaml", "\t- file: tabbed.yaml\n")
		}, 1, []string{"recipe scripts/auto-rebase/assets_lvms.yaml does not parse", "line "}},
		{"recipe lists a directory twice", func(t *testing.T, dir string) {
			appendText(t, dir, "scripts/auto-rebase/assets_lvms.yaml", "\n  - dir: ./components/lvms\n    files: []\n")
		}, 1, []string{"scripts/auto-rebase/assets_lvms.yaml: assets/components/lvms/ is listed twice (lines "}},
		{"release.base without patch", func(t *testing.T, dir string) {
			replaceText(t, dir, "assets/release/release-x86_64.json", "5.0.0-0.nightly-2026-07-23-224236", "v5.0.0")
		}, ExitError, []string{`assets/release/release-x86_64.json: release.base "v5.0.0": expected an OpenShift version X.Y.Z`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
			tc.edit(t, dir)
			before := treeHash(t, dir)
			code, out, errOut := e.run(dir)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if treeHash(t, dir) != before {
				t.Error("the refused run changed the tree")
			}
		})
	}
}

// TestLastRebaseTextIsNotACommand: GA pull specs in a comment, an echo and a here-document
// above the executed invocation are text; the run takes the nightlies bash would run with.
func TestLastRebaseTextIsNotACommand(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: a whole dry run")
	}
	e := newE2E(t)
	dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
	const ga = "quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64 quay.io/openshift-release-dev/ocp-release:5.0.1-aarch64"
	prependLine(t, dir, "scripts/auto-rebase/last_rebase.sh", "# ./scripts/auto-rebase/rebase.sh to "+ga+"\n"+
		"echo ./scripts/auto-rebase/rebase.sh to "+ga+"\ncat <<EOF\n./scripts/auto-rebase/rebase.sh to "+ga+"\nEOF")
	res := e.runJSON(dir, "--dry-run")
	resolution, _ := res["resolution"].(map[string]any)
	var refs []string
	for _, p := range asSlice(resolution["payloads"]) {
		refs = append(refs, p.(map[string]any)["ref"].(string))
	}
	sort.Strings(refs)
	want := "registry.ci.openshift.org/ocp-arm64/release-arm64-5:5.0.0-0.nightly-arm64-2026-07-27-004356 registry.ci.openshift.org/ocp/release-5:5.0.0-0.nightly-2026-07-23-224236"
	if strings.Join(refs, " ") != want {
		t.Errorf("payloads %v, want the executed invocation's nightlies %s", refs, want)
	}
}

// prependLine puts text on its own line(s) after the first line (the shebang) of a tree file.
func prependLine(t *testing.T, dir, rel, text string) {
	t.Helper()
	data := readFile(t, dir, rel)
	first, rest, _ := strings.Cut(data, "\n")
	writeFile(t, dir, rel, first+"\n"+text+"\n"+rest)
}

func appendText(t *testing.T, dir, rel, text string) {
	t.Helper()
	writeFile(t, dir, rel, readFile(t, dir, rel)+text)
}

func replaceText(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	data := readFile(t, dir, rel)
	if !strings.Contains(data, old) {
		t.Fatalf("%s lacks %q", rel, old)
	}
	writeFile(t, dir, rel, strings.ReplaceAll(data, old, new))
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, rel, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

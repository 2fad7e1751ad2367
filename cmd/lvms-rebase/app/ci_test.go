package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// workflow is the part of docs/ci.md's GitHub Actions example the test evaluates.
type workflow struct {
	Jobs map[string]struct {
		Needs    any               `json:"needs"`
		If       string            `json:"if"`
		Outputs  map[string]string `json:"outputs"`
		Strategy struct {
			Matrix map[string]string `json:"matrix"`
		} `json:"strategy"`
		Steps []struct {
			ID  string `json:"id"`
			Run string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readWorkflow(t *testing.T) workflow {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/ci.md has no ```yaml block")
	}
	var w workflow
	if err := yaml.Unmarshal(m[1], &w); err != nil {
		t.Fatalf("docs/ci.md workflow: %v", err)
	}
	return w
}

// exprRE is the one expression form the example uses: fromJSON(needs.J.outputs.O) followed
// by a path, optionally compared with null.
var exprRE = regexp.MustCompile(`^\$\{\{\s*fromJSON\(needs\.([\w-]+)\.outputs\.([\w-]+)\)((?:\.\w+|\[\d+\])*)\s*(!= null)?\s*\}\}$`)

// evalExpr evaluates such an expression against the job outputs (raw strings, as GitHub
// passes them).
func evalExpr(t *testing.T, w workflow, expr string, outputs map[string]string) any {
	t.Helper()
	m := exprRE.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		t.Fatalf("expression %q: not of the form ${{ fromJSON(needs.J.outputs.O).path }}", expr)
	}
	if _, ok := w.Jobs[m[1]].Outputs[m[2]]; !ok {
		t.Fatalf("expression %q: job %s has no output %s", expr, m[1], m[2])
	}
	var v any
	if err := json.Unmarshal([]byte(outputs[m[2]]), &v); err != nil {
		t.Fatalf("output %s: %v", m[2], err)
	}
	for _, part := range regexp.MustCompile(`\.\w+|\[\d+\]`).FindAllString(m[3], -1) {
		if strings.HasPrefix(part, ".") {
			obj, _ := v.(map[string]any)
			v = obj[part[1:]]
			continue
		}
		i, _ := strconv.Atoi(strings.Trim(part, "[]"))
		if arr, _ := v.([]any); i < len(arr) {
			v = arr[i]
		} else {
			v = nil
		}
	}
	if m[4] != "" {
		return v != nil
	}
	return v
}

// TestCIExample: docs/ci.md's workflow builds its matrix from what `outdated -o json` really
// emits (the lagging branches), runs the rebase job only when one lags and flags unreadable
// branches; the shell entry point runs the same flow on a clone (DRY_RUN=y: nothing pushed).
func TestCIExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone and rebases its lagging branches")
	}
	w := readWorkflow(t)
	e := newE2E(t)
	dir := makeClone(t)
	_, out, _ := e.run(dir, "outdated", "-o", "json")
	step := ""
	for _, s := range w.Jobs["outdated"].Steps {
		if s.ID == "outdated" {
			step = s.Run
		}
	}
	if !strings.Contains(step, "lvms-rebase outdated -o json") || !strings.Contains(step, `echo "report=$(jq -c . outdated.json)" >> "$GITHUB_OUTPUT"`) ||
		w.Jobs["outdated"].Outputs["report"] != "${{ steps.outdated.outputs.report }}" {
		t.Fatalf("the outdated job does not publish the command's JSON as output report:\n%s", step)
	}
	outputs := map[string]string{"report": out}
	matrix := evalExpr(t, w, w.Jobs["rebase"].Strategy.Matrix["branch"], outputs)
	var got []string
	for _, b := range matrix.([]any) {
		got = append(got, b.(string))
	}
	if want := []string{"main", "release-4.17", "release-4.22"}; !slices.Equal(got, want) {
		t.Errorf("matrix branches %q, want the lagging branches %q", got, want)
	}
	if evalExpr(t, w, w.Jobs["rebase"].If, outputs) != true || evalExpr(t, w, w.Jobs["unreadable"].If, outputs) != true {
		t.Error("the rebase job or the unreadable job would not run")
	}
	if evalExpr(t, w, w.Jobs["rebase"].If, map[string]string{"report": `{"outdated":[],"errors":[]}`}) != false {
		t.Error("the rebase job would run with no lagging branch")
	}
	runEntryPoint(t, e, dir)
}

// runEntryPoint runs hack/lvms_rebase_job_entrypoint.sh with DRY_RUN=y against the clone.
func runEntryPoint(t *testing.T, e *e2e, dir string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lvms-rebase")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	setGitIdentity(t)
	before := gitState(t, dir)
	prDir := t.TempDir()
	script, _ := filepath.Abs("../../../hack/lvms_rebase_job_entrypoint.sh")
	args := append([]string{script, "--cache-dir", e.cache, "--insecure-registry", e.reg.Host()}, append(e.reg.MirrorFlags(), e.reg.SignatureFlags()...)...)
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LVMS_REBASE="+bin, "PULL_SECRET="+e.authFile, "DRY_RUN=y", "PR_DIR="+prDir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("entry point: %v, want exit 1 (a branch unreadable)\n%s", err, out)
	}
	for _, b := range []string{"main", "release-4.17", "release-4.22"} {
		if !strings.Contains(string(out), "DRY_RUN: would push lvms-rebase/"+b) {
			t.Errorf("entry point did not handle %s:\n%s", b, out)
		}
		if _, err := os.Stat(filepath.Join(prDir, b+".md")); err != nil {
			t.Errorf("no PR body for %s: %v", b, err)
		}
		gitOut(t, dir, "rev-parse", "--verify", "lvms-rebase/"+b)
	}
	if !strings.Contains(string(out), brokenBranch+": error") {
		t.Errorf("entry point did not report the unreadable branch:\n%s", out)
	}
	if gitState(t, dir) != before {
		t.Error("the entry point touched HEAD, the index or the work tree")
	}
}

package app

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cloneBranches are the branches of the generated clone: three eras (release-4.17 with
// 4.17's record names, release-4.22, main on 5.0) and one broken tree.
var cloneBranches = map[string]string{"release-4.17": "4.17", "release-4.22": "4.22", "main": "5.0"}

const brokenBranch = "release-4.21"

// makeClone builds a MicroShift-like clone: one branch per cloneBranches entry from the
// generated trees, a broken branch whose release JSON has no release.base, a branch
// "feature" (not a MicroShift name) checked out with an uncommitted edit and a staged file.
func makeClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q", "-b", "main")
	for _, b := range []string{"main", "release-4.17", "release-4.22", brokenBranch} {
		if b != "main" {
			gitOut(t, dir, "checkout", "-q", "--orphan", b)
		}
		gitOut(t, dir, "rm", "-rfq", "--ignore-unmatch", ".")
		src := filepath.Join(treesRoot, cloneBranches[b])
		if b == brokenBranch {
			src = filepath.Join(treesRoot, "5.0")
		}
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		if b == brokenBranch {
			if err := os.WriteFile(filepath.Join(dir, "assets/release/release-x86_64.json"), []byte("{\"images\": {}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitOut(t, dir, "add", "-A")
		gitOut(t, dir, "commit", "-qm", "tree of "+b)
	}
	gitOut(t, dir, "checkout", "-q", "-b", "feature", "main")
	if err := os.WriteFile(filepath.Join(dir, "NOTES"), []byte("work in progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", "NOTES")
	if err := os.WriteFile(filepath.Join(dir, "assets/components/ovn/namespace.yaml"), []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type outdatedReport struct {
	APIVersion, Kind string
	Items            []struct {
		Kind, Branch, OCP, LVMS, Status, Reason, RecordedFrom string
		Bundle, Payload                                       struct{ Current, Newest string }
	}
	Outdated, Errors []string
}

func (e *e2e) outdated(t *testing.T, dir string, args ...string) (int, outdatedReport, string) {
	t.Helper()
	code, out, errOut := e.run(dir, append([]string{"outdated", "-o", "json"}, args...)...)
	var rep outdatedReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("outdated -o json: exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	return code, rep, errOut
}

// TestOutdated: every default branch is reported (the broken one as an error, exit 1), a
// 4.17 tree without a lock is read from last_lvms_rebase.sh, the others lag the newest
// bundle (exit 3 without the broken branch), and the tags of each repository are listed
// once per run however many branches are checked.
func TestOutdated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone")
	}
	e := newE2E(t)
	dir := makeClone(t)
	code, rep, errOut := e.outdated(t, dir)
	if code != ExitError {
		t.Errorf("exit %d, want %d (a broken branch)\n%s", code, ExitError, errOut)
	}
	if rep.APIVersion == "" || rep.Kind != "BranchStatusList" || len(rep.Items) != 4 {
		t.Fatalf("report %+v", rep)
	}
	want := map[string]struct{ ocp, lvms, current, status string }{
		"main":         {"5.0", "4.21", "v4.20.2", "outdated"},
		"release-4.17": {"4.17", "4.17", "v4.17.7", "outdated"},
		"release-4.21": {"", "", "", "error"},
		"release-4.22": {"4.22", "4.21", "v4.20.2", "outdated"},
	}
	for _, it := range rep.Items {
		w := want[it.Branch]
		if it.Kind != "BranchStatus" || it.OCP != w.ocp || it.LVMS != w.lvms || it.Bundle.Current != w.current || it.Status != w.status {
			t.Errorf("%s: %+v, want %+v", it.Branch, it, w)
		}
		if it.Status == "outdated" && (it.Bundle.Newest == it.Bundle.Current || it.Payload.Current != it.Payload.Newest || it.RecordedFrom != "records") {
			t.Errorf("%s: want only the bundle lagging, read from the records: %+v", it.Branch, it)
		}
	}
	if strings.Join(rep.Errors, ",") != brokenBranch || !strings.Contains(rep.Items[2].Reason, "release-x86_64.json") {
		t.Errorf("errors %q; broken branch reason %q", rep.Errors, rep.Items[2].Reason)
	}
	e.reg.ResetStats()
	code, _, _ = e.outdated(t, dir, "--branches", "main")
	one := e.reg.Stats().Requests(http.MethodGet, "/tags/list")
	e.reg.ResetStats()
	code3, rep3, _ := e.outdated(t, dir, "--branches", "main,release-4.22", "--branches", "release-4.17")
	three := e.reg.Stats().Requests(http.MethodGet, "/tags/list")
	if code != ExitDrift || code3 != ExitDrift || len(rep3.Items) != 3 || len(rep3.Outdated) != 3 {
		t.Errorf("exits %d, %d, want %d; report %+v", code, code3, ExitDrift, rep3)
	}
	if one == 0 || three != one {
		t.Errorf("tag-list requests: %d for one branch, %d for three; want the same (one listing per repository)", one, three)
	}
	code, out, _ := e.run(dir, "outdated", "--branches", "release-4.17")
	if code != ExitDrift || !strings.Contains(out, "v4.17.7 → ") || !strings.Contains(out, "outdated: bundle v4.17.7 → ") {
		t.Errorf("text table: exit %d\n%s", code, out)
	}
}

package app

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitState is what a multi-branch run must not touch: HEAD, the index and the work tree.
func gitState(t *testing.T, dir string) string {
	t.Helper()
	return gitOut(t, dir, "symbolic-ref", "HEAD") + gitOut(t, dir, "rev-parse", "HEAD") +
		gitOut(t, dir, "ls-files", "--stage") + gitOut(t, dir, "status", "--porcelain", "--untracked-files=all") +
		workTreeHash(t, dir)
}

// workTreeHash hashes the work tree's files (not .git).
func workTreeHash(t *testing.T, dir string) string {
	t.Helper()
	files := readTree(t, dir)
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasPrefix(p, ".git/") {
			fmt.Fprintf(&b, "%s\x00%x\n", p, sha256.Sum256(files[p]))
		}
	}
	return b.String()
}

// branchTree extracts every file of a branch (git archive, so no checkout).
func branchTree(t *testing.T, repo, branch string) string {
	t.Helper()
	dst := t.TempDir()
	untar := exec.Command("tar", "-x", "-C", dst)
	untar.Stdin = strings.NewReader(gitOut(t, repo, "archive", "--format=tar", branch))
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return dst
}

type fleetReport struct {
	Kind  string
	Items []struct {
		Branch, ResultBranch, Commit, PRBody, Error string
	}
	Failed []string
}

// TestFleetRebase is the acceptance run of a multi-branch rebase on a generated clone with
// three eras and a broken branch: the broken branch is reported (exit 1) and the others are
// done; HEAD, the index and the work tree are untouched; each lvms-rebase/<b> holds exactly
// what a single run on a checkout of b writes, with the per-phase commits and a PR body;
// MicroShift's presubmit passes on each; after merging the results, outdated exits 0.
func TestFleetRebase(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: three rebases")
	}
	setGitIdentity(t)
	e := newE2E(t)
	dir := makeClone(t)
	before := gitState(t, dir)
	bodies := filepath.Join(t.TempDir(), "bodies")
	good := []string{"release-4.17", "release-4.22", "main"}
	code, out, errOut := e.run(dir, "--branches", strings.Join(append([]string{brokenBranch}, good...), ","), "--commit", "--pr-body-dir", bodies, "-o", "json")
	if code != ExitError || !strings.Contains(errOut, "1 of 4 branches failed: "+brokenBranch) {
		t.Errorf("exit %d, want %d naming the broken branch\nstderr:\n%s", code, ExitError, errOut)
	}
	var rep fleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Kind != "BranchRebaseList" || len(rep.Items) != 4 || rep.Items[0].Branch != brokenBranch || rep.Items[0].Error == "" ||
		strings.Join(rep.Failed, ",") != brokenBranch {
		t.Fatalf("report (want the given order, the broken branch failed): %+v", rep)
	}
	if after := gitState(t, dir); after != before {
		t.Errorf("the run touched HEAD, the index or the work tree:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	checkBranchLines(t, errOut, good)
	if wts := gitOut(t, dir, "worktree", "list"); strings.Count(wts, "\n") != 1 {
		t.Errorf("temporary worktrees left:\n%s", wts)
	}
	for i, b := range good {
		it := rep.Items[i+1]
		if it.Branch != b || it.Error != "" || it.ResultBranch != "lvms-rebase/"+b {
			t.Fatalf("item %d: %+v", i+1, it)
		}
		got := branchTree(t, dir, it.ResultBranch)
		single := copyTree(t, filepath.Join(treesRoot, cloneBranches[b]))
		if code, out, errOut := e.run(single); code != 0 {
			t.Fatalf("single run on %s: exit %d\n%s\n%s", b, code, out, errOut)
		}
		if g, w := treeHash(t, got), treeHash(t, single); g != w {
			t.Errorf("lvms-rebase/%s differs from a single run on a checkout of %s", b, b)
		}
		log := gitOut(t, dir, "log", "--format=%s", b+".."+it.ResultBranch)
		for _, msg := range []string{"update lvms-rebase.lock.yaml", "update LVMS images", "update LVMS manifests"} {
			if !strings.Contains(log, msg) {
				t.Errorf("lvms-rebase/%s lacks the commit %q:\n%s", b, msg, log)
			}
		}
		if md, err := os.ReadFile(filepath.Join(bodies, b+".md")); err != nil || !strings.Contains(string(md), "| LVMS bundle |") {
			t.Errorf("PR body of %s: %v\n%s", b, err, md)
		}
		presubmit(t, got)
	}
	if !strings.Contains(gitOut(t, dir, "log", "--format=%s", "release-4.17..lvms-rebase/release-4.17"), "update last_lvms_rebase.sh") {
		t.Error("release-4.17's record commit does not name last_lvms_rebase.sh")
	}
	for _, b := range good {
		gitOut(t, dir, "fetch", "-q", ".", "lvms-rebase/"+b+":"+b) // fast-forward merge, no checkout
	}
	if code, rep, errOut := e.outdated(t, dir, "--branches", strings.Join(good, ",")); code != 0 {
		t.Errorf("outdated after merging: exit %d, want 0: %+v\n%s", code, rep, errOut)
	}
	if after := gitState(t, dir); after != before {
		t.Errorf("merging by fetch touched the work tree")
	}
}

// TestFleetUsage: flags that name one tree's inputs or another mode are usage errors with
// --branches; --pr-body-dir needs --branches.
func TestFleetUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--branches", "main", "--ocp", "4.18"},
		{"--branches", "main", "--pr-body", "x.md"},
		{"--branches", "main", "--dry-run"},
		{"--branches", "main", "--parallel", "0"},
		{"--pr-body-dir", "x"},
	} {
		code, _, errOut := runMain(t, append([]string{"--microshift-dir", dir}, args...)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitUsage, errOut)
		}
	}
}

// checkBranchLines: branches run in parallel, so each step line names its branch ("resolve
// 29ms branch=main"): every step line names one, and each good branch has its resolve line.
func checkBranchLines(t *testing.T, errOut string, good []string) {
	t.Helper()
	resolved := map[string]bool{}
	for _, line := range strings.Split(errOut, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !slices.Contains(runSteps, f[0]) {
			continue
		}
		b, ok := strings.CutPrefix(f[len(f)-1], "branch=")
		if !ok {
			t.Errorf("step line without its branch: %q", line)
		}
		if f[0] == "resolve" {
			resolved[b] = true
		}
	}
	for _, b := range good {
		if !resolved[b] {
			t.Errorf("no resolve line of branch %s:\n%s", b, errOut)
		}
	}
}

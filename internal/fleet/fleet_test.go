package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// TestWorktreesAddAndRemoveInParallel: branches of one fleet run add and remove their
// worktrees at the same moments (a branch that fails fast removes its worktree while its
// neighbour adds one); every add must succeed and no worktree may be left behind.
func TestWorktreesAddAndRemoveInParallel(t *testing.T) {
	repo := t.TempDir()
	gitrepo.Isolate(t)
	gitrepo.Git(t, repo, "init", "-q", "-b", "main")
	gitrepo.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	gitrepo.Git(t, repo, "branch", "release-4.17")
	w := &worktrees{repo: repo}
	ctx := context.Background()
	const workers, rounds = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for i := range workers {
		branch := strings.TrimSpace(gitrepo.Git(t, repo, "rev-parse", []string{"main", "release-4.17"}[i%2]))
		wg.Go(func() {
			for range rounds {
				wt, err := w.add(ctx, branch)
				if err != nil {
					errs <- err
					continue
				}
				if _, err := os.Stat(filepath.Join(wt.dir, ".git")); err != nil {
					errs <- err
				}
				w.remove(ctx, wt)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	out := gitrepo.Git(t, repo, "worktree", "list", "--porcelain")
	if n := strings.Count(out, "worktree "); n != 1 {
		t.Errorf("%d worktrees listed after every remove, want the clone alone:\n%s", n, out)
	}
}

// TestRemoveStaleRemovesOnlyProvablyOwnWorktrees: of the worktrees registered in a clone, a
// run removes those an earlier run of the tool left (its marker names this clone and no live
// run holds the lock; or its directory is gone), and keeps a live run's, one whose marker
// names another clone, and a person's.
func TestRemoveStaleRemovesOnlyProvablyOwnWorktrees(t *testing.T) {
	repo := t.TempDir()
	gitrepo.Isolate(t)
	gitrepo.Git(t, repo, "init", "-q", "-b", "main")
	gitrepo.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	head := strings.TrimSpace(gitrepo.Git(t, repo, "rev-parse", "HEAD"))
	ctx := context.Background()
	w := &worktrees{repo: repo}
	add := func() *worktree {
		wt, err := w.add(ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(wt.parent) })
		return wt
	}
	killed := add()
	killed.unlock() // its process is gone: the kernel dropped the lock
	live := add()
	defer live.unlock()
	vanished := add()
	vanished.unlock()
	if err := os.RemoveAll(vanished.parent); err != nil {
		t.Fatal(err)
	}
	foreign := add()
	foreign.unlock()
	if err := os.WriteFile(filepath.Join(foreign.parent, markerName), []byte("lvms-rebase fleet worktree of /elsewhere/.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(t.TempDir(), "mine")
	gitrepo.Git(t, repo, "worktree", "add", "-q", "--detach", mine, head)

	removed, err := w.removeStale(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range removed {
		got[d] = true
	}
	if len(removed) != 2 || !got[killed.dir] || !got[vanished.dir] {
		t.Errorf("removed %q, want the killed run's %s and the vanished %s", removed, killed.dir, vanished.dir)
	}
	list := gitrepo.Git(t, repo, "worktree", "list", "--porcelain")
	for _, keep := range []string{live.dir, foreign.dir, mine} {
		if !strings.Contains(list, "worktree "+keep+"\n") {
			t.Errorf("%s was removed:\n%s", keep, list)
		}
	}
	if _, err := os.Stat(killed.parent); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory is left: %v", err)
	}
}

// TestPlanBranchesGuardsResultBranches: lvms-rebase/<b> may be moved when it does not exist,
// when the tool's reflog entry says it put it where it is, or when it holds nothing <b> lacks;
// a commit somebody added, a checkout of it, or a branch named lvms-rebase (or
// lvms-rebase/<b>/x) is the branch's problem, found before any work.
func TestPlanBranchesGuardsResultBranches(t *testing.T) {
	repo := t.TempDir()
	gitrepo.Isolate(t)
	gitrepo.Git(t, repo, "init", "-q", "-b", "main")
	gitrepo.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	for _, b := range []string{"fresh", "merged", "ours", "reviewed", "checked", "nested"} {
		gitrepo.Git(t, repo, "branch", b)
	}
	commitOn := func(ref, msg string) string {
		id := strings.TrimSpace(gitrepo.Git(t, repo, "commit-tree", "-p", "main", "-m", msg, "main^{tree}"))
		gitrepo.Git(t, repo, "update-ref", "-m", msg, ref, id)
		return id
	}
	gitrepo.Git(t, repo, "branch", "lvms-rebase/merged", "main")
	// As moveResult leaves them: the tool's reflog entry at the tip.
	for _, b := range []string{"ours", "reviewed"} {
		id := strings.TrimSpace(gitrepo.Git(t, repo, "commit-tree", "-p", "main", "-m", "update LVMS manifests", "main^{tree}"))
		gitrepo.Git(t, repo, "update-ref", "--create-reflog", "-m", reflogPrefix+b, "refs/heads/lvms-rebase/"+b, id, "")
	}
	commitOn("refs/heads/lvms-rebase/reviewed", "reviewer: fix-up")
	gitrepo.Git(t, repo, "branch", "lvms-rebase/checked", "main")
	gitrepo.Git(t, repo, "worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "lvms-rebase/checked")
	gitrepo.Git(t, repo, "branch", "lvms-rebase/nested/x", "main")
	plans, err := planBranches(context.Background(), Options{Repo: repo, Branches: []string{"fresh", "merged", "ours", "reviewed", "checked", "nested"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fresh": "", "merged": "", "ours": "", "reviewed": "holds commits that lvms-rebase did not put there (",
		"checked": "is checked out in", "nested": "the branch lvms-rebase/nested/x exists"}
	for _, p := range plans {
		got := ""
		if p.problem != nil {
			got = p.problem.Error()
		}
		if w := want[p.branch]; (w == "") != (got == "") || !strings.Contains(got, w) {
			t.Errorf("%s: problem %q, want %q", p.branch, got, w)
		}
	}
	other := t.TempDir()
	gitrepo.Git(t, other, "init", "-q", "-b", "main")
	gitrepo.Git(t, other, "commit", "-q", "--allow-empty", "-m", "base")
	gitrepo.Git(t, other, "branch", "fresh")
	gitrepo.Git(t, other, "branch", "lvms-rebase")
	plans, err = planBranches(context.Background(), Options{Repo: other, Branches: []string{"fresh"}})
	if err != nil || plans[0].problem == nil || !strings.Contains(plans[0].problem.Error(), "a branch named lvms-rebase exists") {
		t.Errorf("with a branch named lvms-rebase: %+v, %v", plans, err)
	}
}

package fleet

import (
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
	const workers, rounds = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for i := range workers {
		branch := []string{"main", "release-4.17"}[i%2]
		wg.Go(func() {
			for range rounds {
				wt, err := w.add(branch)
				if err != nil {
					errs <- err
					continue
				}
				if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
					errs <- err
				}
				w.remove(wt)
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

package fleet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWorktreesAddAndRemoveInParallel: branches of one fleet run add and remove their
// worktrees at the same moments (a branch that fails fast removes its worktree while its
// neighbour adds one); every add must succeed and no worktree may be left behind.
func TestWorktreesAddAndRemoveInParallel(t *testing.T) {
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"},
		{"branch", "release-4.17"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
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
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "worktree "); n != 1 {
		t.Errorf("%d worktrees listed after every remove, want the clone alone:\n%s", n, out)
	}
}

package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// worktreePrefix names the temporary directories of the worktrees: <tmp>/<prefix>XXXX holds
// the marker and the worktree <tmp>/<prefix>XXXX/<prefix>XXXX.
const worktreePrefix = "lvms-rebase-worktree-"

// markerName is the file beside each worktree that says whose it is.
const markerName = "lvms-rebase-worktree"

// cleanupTimeout bounds the removal of a worktree after the run was cancelled.
const cleanupTimeout = time.Minute

// worktrees adds and removes the temporary worktrees of one clone. git is not safe against
// itself here: `worktree remove` deletes .git/worktrees when it empties it, and an `add` at
// the same moment fails with "Invalid path '.git/worktrees'" (a fast-failing branch did that
// to its neighbour). The calls are serialized; the rebases between them run in parallel.
type worktrees struct {
	repo string
	mu   sync.Mutex
}

// worktree is one branch's temporary worktree; the lock on its parent directory, held until it
// is removed, tells a later run that it is in use.
type worktree struct {
	dir, parent string
	unlock      func()
}

// marker is what a worktree's marker file holds: the tool and the clone's git directory.
func (w *worktrees) marker(ctx context.Context) ([]byte, error) {
	common, err := git.Line(ctx, w.repo, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(common) {
		if common, err = filepath.Abs(filepath.Join(w.repo, common)); err != nil {
			return nil, err
		}
	}
	return []byte("lvms-rebase fleet worktree of " + common + "\n"), nil
}

// add checks commit out, detached, in a new temporary directory.
func (w *worktrees) add(ctx context.Context, commit string) (*worktree, error) {
	mark, err := w.marker(ctx)
	if err != nil {
		return nil, err
	}
	parent, err := os.MkdirTemp("", worktreePrefix)
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(parent)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		_ = os.RemoveAll(parent)
		return nil, err
	}
	// git names a worktree's admin directory (.git/worktrees/<name>) after the path's last
	// element and picks a free name without a lock: branches added at the same time under one
	// leaf name ("tree") raced for it. The temporary directory's own name is unique.
	wt := &worktree{dir: filepath.Join(parent, filepath.Base(parent)), parent: parent, unlock: unlock}
	if err := os.WriteFile(filepath.Join(parent, markerName), mark, 0o644); err != nil {
		wt.discard()
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := git.Run(ctx, w.repo, "worktree", "add", "-q", "--detach", wt.dir, commit); err != nil {
		wt.discard()
		return nil, err
	}
	return wt, nil
}

func (wt *worktree) discard() {
	_ = os.RemoveAll(wt.parent)
	wt.unlock()
}

// remove removes a worktree add made, with its temporary directory, also when ctx was
// cancelled (an interrupted run cleans up after itself).
func (w *worktrees) remove(ctx context.Context, wt *worktree) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = git.Run(ctx, w.repo, "worktree", "remove", "-f", "-f", wt.dir)
	wt.discard()
}

// removeStale removes the worktrees an earlier run of the tool left registered in the clone
// when it was killed, and returns their paths. A worktree is provably the tool's when its
// path has the tool's form and either its directory is gone (a registration of nothing) or
// the marker beside it names this clone and no live run holds its lock. Any other worktree is
// left alone.
func (w *worktrees) removeStale(ctx context.Context) ([]string, error) {
	out, err := git.Run(ctx, w.repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	mark, err := w.marker(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, l := range strings.Split(string(out), "\n") {
		dir, ok := strings.CutPrefix(l, "worktree ")
		if !ok || !toolShaped(dir) {
			continue
		}
		stale, err := w.removeIfStale(ctx, dir, mark)
		if err != nil {
			return removed, fmt.Errorf("removing the stale worktree %s: %w", dir, err)
		}
		if stale {
			removed = append(removed, dir)
		}
	}
	return removed, nil
}

// toolShaped reports whether dir has the form of the tool's worktrees.
func toolShaped(dir string) bool {
	base := filepath.Base(dir)
	return strings.HasPrefix(base, worktreePrefix) && filepath.Base(filepath.Dir(dir)) == base
}

func (w *worktrees) removeIfStale(ctx context.Context, dir string, mark []byte) (bool, error) {
	parent := filepath.Dir(dir)
	if _, err := os.Lstat(parent); os.IsNotExist(err) {
		w.mu.Lock()
		defer w.mu.Unlock()
		_, err := git.Run(ctx, w.repo, "worktree", "remove", "-f", "-f", dir)
		return err == nil, err
	}
	if got, err := safefile.ReadFile(filepath.Join(parent, markerName), safefile.Options{Max: int64(len(mark))}); err != nil || !bytes.Equal(got, mark) {
		return false, nil // not provably ours
	}
	unlock, err := lockDir(parent)
	if err != nil {
		return false, nil // a live run holds it, or it cannot be locked: left alone
	}
	defer unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := git.Run(ctx, w.repo, "worktree", "remove", "-f", "-f", dir); err != nil {
		return false, err
	}
	return true, os.RemoveAll(parent)
}

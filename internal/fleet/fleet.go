// Package fleet rebases several branches of a MicroShift clone in one run. Each branch is
// rebased in its own temporary `git worktree` (detached at the branch), so the checked-out
// branch, the work tree and the index of the clone are never touched; the result of branch
// b is put on the local branch lvms-rebase/b (replaced if it exists). The runs share one
// cache directory, run with bounded parallelism, and are reported in the order given; a
// failing branch is reported with its error while the others finish.
package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/internal/gittree"
	"github.com/lvms-rebase/lvms-rebase/rebase"
)

// ResultPrefix prefixes the branch that receives a branch's result.
const ResultPrefix = "lvms-rebase/"

// DefaultParallel bounds the branches rebased at once: each run already fans its own
// requests out (source.Options.Concurrency), so a few branches keep a link busy.
const DefaultParallel = 2

// Options configure Run.
type Options struct {
	// Repo is the clone.
	Repo string
	// Branches to rebase, in output order.
	Branches []string
	// Rebase is the per-branch template: MicroShiftDir and PRBody are set per branch, Mode
	// is write. Commit makes the per-phase commits; without it one commit holds the run.
	Rebase rebase.Options
	// PRBodyDir, when set, receives <branch>.md per branch ('/' in a name becomes '_').
	PRBodyDir string
	// Parallel bounds concurrent branches (default DefaultParallel).
	Parallel int
}

// BranchResult is one branch's outcome.
type BranchResult struct {
	Branch string
	// ResultBranch holds the result (lvms-rebase/<branch>); Commit is its tip.
	ResultBranch string
	Commit       string
	PRBody       string
	Result       *rebase.Result
	Error        string
}

// Report is the whole run (`-o json|yaml` prints it as api/v1alpha1's BranchRebaseList).
type Report struct {
	Items []BranchResult
	// Failed lists the branches that failed.
	Failed []string
}

// Run rebases every branch; the error return is for the clone itself (a branch's failure is
// in its BranchResult).
func Run(ctx context.Context, o Options) (*Report, error) {
	// What every branch's run would refuse is refused once, before any worktree.
	check := o.Rebase
	check.MicroShiftDir = o.Repo
	if err := check.Validate(); err != nil {
		return nil, err
	}
	if _, err := gittree.Git(o.Repo, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("%s: not a git clone: %w", o.Repo, err)
	}
	if o.PRBodyDir != "" {
		if err := os.MkdirAll(o.PRBodyDir, 0o755); err != nil {
			return nil, fmt.Errorf("PR body directory: %w", err)
		}
	}
	rep := &Report{Items: make([]BranchResult, len(o.Branches)), Failed: []string{}}
	wts := &worktrees{repo: o.Repo}
	g := errgroup.Group{}
	g.SetLimit(max(o.Parallel, 1))
	if o.Parallel == 0 {
		g.SetLimit(DefaultParallel)
	}
	for i, b := range o.Branches {
		g.Go(func() error {
			rep.Items[i] = runBranch(ctx, o, wts, b)
			return nil
		})
	}
	_ = g.Wait()
	for _, it := range rep.Items {
		if it.Error != "" {
			rep.Failed = append(rep.Failed, it.Branch)
		}
	}
	return rep, nil
}

// runBranch rebases one branch in a temporary worktree and moves lvms-rebase/<b> to the
// result when the run succeeds (a failed run leaves lvms-rebase/<b> as it was).
func runBranch(ctx context.Context, o Options, wts *worktrees, branch string) BranchResult {
	br := BranchResult{Branch: branch}
	fail := func(err error) BranchResult {
		br.Error = err.Error()
		return br
	}
	if _, err := gittree.Git(o.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err != nil {
		return fail(fmt.Errorf("branch %s: not a local branch of %s", branch, o.Repo))
	}
	wt, err := wts.add(branch)
	if err != nil {
		return fail(err)
	}
	defer wts.remove(wt)
	opts := o.Rebase
	opts.MicroShiftDir, opts.Mode = wt, rebase.ModeWrite
	if o.PRBodyDir != "" {
		opts.PRBody = filepath.Join(o.PRBodyDir, strings.ReplaceAll(branch, "/", "_")+".md")
	}
	res, err := rebase.Run(ctx, opts)
	br.Result = res
	if err != nil {
		return fail(fmt.Errorf("branch %s: %w", branch, err))
	}
	if !opts.Commit {
		if err := commitAll(wt, branch); err != nil {
			return fail(err)
		}
	}
	tip, err := gittree.Git(wt, "rev-parse", "HEAD")
	if err != nil {
		return fail(err)
	}
	br.Commit, br.ResultBranch, br.PRBody = strings.TrimSpace(string(tip)), ResultPrefix+branch, opts.PRBody
	if _, err := gittree.Git(o.Repo, "branch", "-f", br.ResultBranch, br.Commit); err != nil {
		return fail(err)
	}
	return br
}

// commitAll commits everything the run changed as one commit (runs without --commit).
func commitAll(wt, branch string) error {
	if _, err := gittree.Git(wt, "add", "-A"); err != nil {
		return err
	}
	if out, err := gittree.Git(wt, "status", "--porcelain"); err != nil || len(out) == 0 {
		return err
	}
	_, err := gittree.Git(wt, "commit", "-q", "-m", "lvms-rebase: update LVMS on "+branch)
	return err
}

// worktrees adds and removes the temporary worktrees of one clone. git is not safe against
// itself here: `worktree remove` deletes .git/worktrees when it empties it, and an `add` at
// the same moment fails with "Invalid path '.git/worktrees'" (a fast-failing branch did that
// to its neighbour). The calls are serialized; the rebases between them run in parallel.
type worktrees struct {
	repo string
	mu   sync.Mutex
}

// add checks branch out, detached, in a new temporary directory and returns its path.
func (w *worktrees) add(branch string) (string, error) {
	parent, err := os.MkdirTemp("", "lvms-rebase-worktree-")
	if err != nil {
		return "", err
	}
	// git names a worktree's admin directory (.git/worktrees/<name>) after the path's last
	// element and picks a free name without a lock: branches added at the same time under one
	// leaf name ("tree") raced for it. The temporary directory's own name is unique.
	wt := filepath.Join(parent, filepath.Base(parent))
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := gittree.Git(w.repo, "worktree", "add", "-q", "--detach", wt, "refs/heads/"+branch); err != nil {
		_ = os.RemoveAll(parent)
		return "", err
	}
	return wt, nil
}

// remove removes a worktree add made, with its temporary directory.
func (w *worktrees) remove(wt string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = gittree.Git(w.repo, "worktree", "remove", "-f", wt)
	_ = os.RemoveAll(filepath.Dir(wt))
}

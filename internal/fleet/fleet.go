// Package fleet rebases several branches of a MicroShift clone in one run. Each branch is
// rebased in its own temporary `git worktree` (detached at the branch), so the checked-out
// branch, the work tree and the index of the clone are never touched; the result of branch
// b is put on the local branch lvms-rebase/b. The runs share one cache directory, run with
// bounded parallelism, and are reported in the order given; a failing branch is reported with
// its error while the others finish.
//
// What can be known before any work is checked first: the branch names (each a local branch,
// no revision, no duplicate, and every name derived from them — PR body file, result branch —
// distinct, also on a case-insensitive file system), git's identity, and for each branch
// whether lvms-rebase/b may be moved: only when the tool put it where it is (its reflog says
// so) or it holds no commit b lacks; a reviewer's commit on it is never moved over. Worktrees
// left by a killed run of the tool are removed (only those it can prove are its own, by their
// marker and a free lock) and reported.
package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// BranchKey is the attribute naming the branch on every log record of its run.
const BranchKey = "branch"

// ResultPrefix prefixes the branch that receives a branch's result.
const ResultPrefix = "lvms-rebase/"

// DefaultParallel bounds the branches rebased at once: each run already fans its own
// requests out (source.Options.Concurrency), so a few branches keep a link busy.
const DefaultParallel = 2

// Options configure Run.
type Options struct {
	// Repo is the clone.
	Repo string
	// Branches to rebase, in output order: local branch names, at least one.
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
	// StaleWorktrees are the worktrees of an earlier, killed run of the tool that this run
	// removed first.
	StaleWorktrees []string
}

// Run rebases every branch; the error return is for the clone and the names given (a
// branch's failure is in its BranchResult).
func Run(ctx context.Context, o Options) (*Report, error) {
	// What every branch's run would refuse is refused once, before any worktree.
	check := o.Rebase
	check.MicroShiftDir = o.Repo
	if err := check.Validate(); err != nil {
		return nil, err
	}
	if _, err := git.Run(ctx, o.Repo, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("%s: not a git clone: %w", o.Repo, err)
	}
	plans, err := planBranches(ctx, o)
	if err != nil {
		return nil, err
	}
	// Every branch ends in a commit, with --commit or not: git must know who makes it.
	if err := commit.CheckIdentity(ctx, o.Repo); err != nil {
		return nil, err
	}
	if o.PRBodyDir != "" {
		if err := os.MkdirAll(o.PRBodyDir, 0o755); err != nil {
			return nil, &option.Error{Option: option.PRBodyDir, Err: err}
		}
	}
	wts := &worktrees{repo: o.Repo}
	rep := &Report{Items: make([]BranchResult, len(plans)), Failed: []string{}}
	if rep.StaleWorktrees, err = wts.removeStale(ctx); err != nil {
		return nil, err
	}
	g := errgroup.Group{}
	g.SetLimit(max(o.Parallel, 1))
	if o.Parallel == 0 {
		g.SetLimit(DefaultParallel)
	}
	for i, p := range plans {
		g.Go(func() error {
			rep.Items[i] = runBranch(ctx, o, wts, p)
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
// result when the run succeeds (a failed run leaves lvms-rebase/<b> as it was). A panic in
// the branch's run is that branch's error.
func runBranch(ctx context.Context, o Options, wts *worktrees, p plan) (br BranchResult) {
	br = BranchResult{Branch: p.branch}
	fail := func(err error) BranchResult {
		br.Error = err.Error()
		return br
	}
	defer func() {
		if v := recover(); v != nil {
			br = fail(fmt.Errorf("branch %s: internal error: %v\n%s", p.branch, v, debug.Stack()))
		}
	}()
	if p.problem != nil {
		return fail(p.problem)
	}
	if err := checkReadable(ctx, o.Repo, p); err != nil {
		return fail(err)
	}
	wt, err := wts.add(ctx, p.commit)
	if err != nil {
		return fail(fmt.Errorf("branch %s: %w", p.branch, err))
	}
	defer wts.remove(ctx, wt)
	opts := o.Rebase
	opts.MicroShiftDir, opts.Mode = wt.dir, rebase.ModeWrite
	if !opts.Commit {
		opts.Commit, opts.CommitMessage = true, "lvms-rebase: update LVMS on "+p.branch
	}
	// Branches run in parallel: every record of this one names it (BranchKey), or their
	// step lines and warnings could not be told apart.
	if opts.Logger != nil {
		opts.Logger = opts.Logger.With(BranchKey, p.branch)
	}
	if opts.Source.Logger != nil {
		opts.Source.Logger = opts.Source.Logger.With(BranchKey, p.branch)
	}
	if o.PRBodyDir != "" {
		opts.PRBody = filepath.Join(o.PRBodyDir, p.prBody)
	}
	res, err := rebase.Run(ctx, opts)
	br.Result = res
	if err != nil {
		return fail(fmt.Errorf("branch %s: %w", p.branch, err))
	}
	tip, err := git.Line(ctx, wt.dir, "rev-parse", "HEAD")
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return fail(fmt.Errorf("branch %s: rebased and committed at %.12s, but %s was not moved: %w", p.branch, tip, p.result, context.Cause(ctx)))
	}
	if err := moveResult(ctx, o.Repo, p, tip); err != nil {
		return fail(err)
	}
	br.Commit, br.ResultBranch, br.PRBody = tip, p.result, opts.PRBody
	return br
}

// branchError is a branch's failure with the branch named first.
func branchError(branch, format string, a ...any) error {
	return fmt.Errorf("branch %s: %s", branch, fmt.Sprintf(format, a...))
}

package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/gittree"
)

// reflogPrefix starts the reflog message of every move of a result branch by the tool: the
// proof that the branch is where the tool put it.
const reflogPrefix = "lvms-rebase: result of "

// checkedOutBranches are the branches checked out in the clone or any of its worktrees.
func checkedOutBranches(ctx context.Context, repo string) (map[string]string, error) {
	out, err := git.Run(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	at := map[string]string{}
	var path string
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			path = p
		} else if ref, ok := strings.CutPrefix(l, "branch "); ok {
			at[ref] = path
		}
	}
	return at, nil
}

// resultProblem says why the run may not put p's result on p.result, or nil: a branch named
// lvms-rebase (or lvms-rebase/<b>/…) takes the name, the branch is checked out somewhere, or
// it holds commits the tool did not put there — a reviewer's fix-up is never moved over.
func resultProblem(ctx context.Context, repo string, all gittree.Refs, checkedOut map[string]string, p plan) error {
	ref := "refs/heads/" + p.result
	if _, ok := all["refs/heads/"+strings.TrimSuffix(ResultPrefix, "/")]; ok {
		return branchError(p.branch, "a branch named %s exists, so %s cannot be created; rename that branch",
			strings.TrimSuffix(ResultPrefix, "/"), p.result)
	}
	for r := range all {
		if strings.HasPrefix(r, ref+"/") {
			return branchError(p.branch, "the branch %s exists, so %s cannot be created; rename it", strings.TrimPrefix(r, "refs/heads/"), p.result)
		}
	}
	if at, ok := checkedOut[ref]; ok {
		return branchError(p.branch, "%s is checked out in %s; the run does not move a branch under a work tree", p.result, at)
	}
	if p.resultOld == "" {
		return nil
	}
	if ours, err := movedByTool(ctx, repo, p); err != nil || ours {
		return err
	}
	// A result branch merged into the branch (or never ahead of it) holds nothing to lose.
	if _, err := git.Run(ctx, repo, "merge-base", "--is-ancestor", p.resultOld, p.commit); err == nil {
		return nil
	}
	log, err := git.Line(ctx, repo, "log", "--format=%h %s", "-n", "3", p.commit+".."+p.resultOld)
	if err != nil {
		return err
	}
	return branchError(p.branch, "%s holds commits that lvms-rebase did not put there (%s); it is not moved over them: "+
		"merge or keep them under another name (git branch -m %s <name>), then run again",
		p.result, strings.ReplaceAll(log, "\n", "; "), p.result)
}

// movedByTool reports whether p.result is where the tool last put it: the newest entry of its
// reflog is the tool's, at the branch's current tip.
func movedByTool(ctx context.Context, repo string, p plan) (bool, error) {
	out, err := git.Line(ctx, repo, "reflog", "show", "--format=%H%x09%gs", "-n", "1", "refs/heads/"+p.result, "--")
	if err != nil {
		return false, nil // no reflog: nothing proves the tool put it there
	}
	id, msg, _ := strings.Cut(out, "\t")
	return id == p.resultOld && msg == reflogPrefix+p.branch, nil
}

// moveResult puts tip on p.result, recording in its reflog that the tool did, and only if the
// branch is still where the run found it (a change since is not overwritten).
func moveResult(ctx context.Context, repo string, p plan, tip string) error {
	if _, err := git.Run(ctx, repo, "update-ref", "--create-reflog", "-m", reflogPrefix+p.branch,
		"refs/heads/"+p.result, tip, p.resultOld); err != nil {
		return branchError(p.branch, "moving %s to %.12s (it was at %s when the run started): %v", p.result, tip, orNone(p.resultOld), err)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no commit"
	}
	return fmt.Sprintf("%.12s", s)
}

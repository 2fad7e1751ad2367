package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/gittree"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// plan is one branch as checked before any work.
type plan struct {
	branch string
	// commit is the branch's tip when the run started: the worktree is made at it.
	commit string
	// prBody is the PR body's file name under Options.PRBodyDir; result the branch that
	// receives the result, resultOld its tip before the run ("" when it does not exist).
	prBody, result, resultOld string
	// problem is why this branch cannot be rebased, found before any work (the others run).
	problem error
}

// PRBodyName is the file name of branch's PR body under Options.PRBodyDir: the branch name
// with '/' as '_' and ".md" (Run refuses branches whose names give the same file).
func PRBodyName(branch string) string { return strings.ReplaceAll(branch, "/", "_") + ".md" }

// planBranches checks the names given before any work. The caller's mistakes are one
// *option.Error naming each: an empty list, a name that is no branch name (blank, a revision
// such as main~1), a name given twice, two names that give the same PR body file or result
// branch — also where only case or Unicode normalisation tells them apart, as a
// case-insensitive file system holds one file for both — or a result branch that is another
// input. What stops one branch only (not a local branch, its result branch cannot be moved) is
// that branch's problem; the others run.
func planBranches(ctx context.Context, o Options) ([]plan, error) {
	if len(o.Branches) == 0 {
		return nil, option.Errorf(option.Branches, "is empty: name at least one local branch")
	}
	refs, err := gittree.ReadRefs(ctx, o.Repo)
	if err != nil {
		return nil, err
	}
	var problems []string
	claimed := map[string]string{} // kind and folded name -> the branch that gave it
	claim := func(kind, name, by string) {
		key := kind + "\x00" + gittree.Fold(name)
		switch first, ok := claimed[key]; {
		case ok && first == by:
			problems = append(problems, fmt.Sprintf("%q given twice", by))
		case ok:
			problems = append(problems, fmt.Sprintf("%q and %q both give the %s %s", first, by, kind, name))
		default:
			claimed[key] = by
		}
	}
	plans := make([]plan, 0, len(o.Branches))
	for _, b := range o.Branches {
		if msg := gittree.BranchNameProblem(ctx, o.Repo, b); msg != "" {
			problems = append(problems, msg)
			continue
		}
		p := plan{branch: b, prBody: PRBodyName(b), result: ResultPrefix + b}
		claim("branch", b, b)
		claim("result branch", p.result, b)
		if o.PRBodyDir != "" {
			claim("PR body file", p.prBody, b)
		}
		plans = append(plans, p)
	}
	for _, p := range plans {
		if first, ok := claimed["branch\x00"+gittree.Fold(p.result)]; ok {
			problems = append(problems, fmt.Sprintf("the result of %q, %s, is the branch %q given too", p.branch, p.result, first))
		}
	}
	if len(problems) > 0 {
		return nil, option.Errorf(option.Branches, "%s", strings.Join(problems, "; "))
	}
	checkedOut, err := checkedOutBranches(ctx, o.Repo)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		p := &plans[i]
		var ok bool
		if p.commit, ok = refs.Branch(p.branch); !ok {
			p.problem = errors.New(refs.NotLocal(ctx, o.Repo, p.branch))
			continue
		}
		p.resultOld, _ = refs.Branch(p.result)
		p.problem = resultProblem(ctx, o.Repo, refs, checkedOut, *p)
	}
	return plans, nil
}

package rebase

import (
	"context"
	"fmt"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// commit makes the --commit commits of a write that changed the tree. Preflight made sure
// nothing a commit takes differed from HEAD before the run (commit.Check), so the tree's
// changes are exactly what the commits must hold; commit.Phases verifies that they do.
func (r *run) commit(ctx context.Context, rec recordsOut, changes *tree.Changes) ([]string, error) {
	if r.opts.Mode != ModeWrite || !r.opts.Commit || !changes.Changed() {
		return nil, nil
	}
	in := commit.Input{Root: r.opts.MicroShiftDir, Managed: rec.managed, Records: rec.recordPaths, Files: rec.files, Removed: changes.Remove}
	var made []string
	var err error
	if r.opts.CommitMessage != "" {
		made, err = commit.One(ctx, in, r.opts.CommitMessage)
	} else {
		made, err = commit.Phases(ctx, in)
	}
	if err != nil {
		return made, fmt.Errorf("the tree was written, and %d of its commits made: %w", len(made), err)
	}
	return made, nil
}

// reportUncommitted records, for a run without --commit in a git work tree, which files
// lvms-rebase writes differ from HEAD (Result.Uncommitted): the tree may already hold what the
// inputs render (a run whose --commit did not finish, a write nobody committed), and "no
// changes" must not hide that from a CI job that commits only when the run changed files.
func (r *run) reportUncommitted(ctx context.Context, s *graph.Step, changes *tree.Changes) ([]string, error) {
	if r.opts.Commit && r.opts.Mode == ModeWrite {
		return nil, nil
	}
	root := r.opts.MicroShiftDir
	if inside, err := git.Line(ctx, root, "rev-parse", "--is-inside-work-tree"); err != nil || inside != "true" {
		return nil, nil // not a git work tree: nothing is committed to compare with
	}
	dirty, err := commit.Uncommitted(ctx, root, commit.Paths())
	if err != nil {
		return nil, err
	}
	if len(dirty) > 0 && !changes.Changed() {
		s.Warn(fmt.Sprintf("the tree already holds what the inputs render, but %d file(s) lvms-rebase writes differ from HEAD and are not committed: %s",
			len(dirty), fewOf(dirty)))
	}
	return dirty, nil
}

// warnedPaths is how many paths a warning names before it counts the rest.
const warnedPaths = 5

// fewOf names the first warnedPaths of paths and counts the others: a warning is one line on
// stderr, and a first run nobody committed differs in every file it writes (dozens);
// Result.Uncommitted (-o json's uncommitted) and the PR body list every path.
func fewOf(paths []string) string {
	if len(paths) <= warnedPaths {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more (-o json lists them: uncommitted)", strings.Join(paths[:warnedPaths], ", "), len(paths)-warnedPaths)
}

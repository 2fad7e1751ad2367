package rebase

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/prbody"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// preflight checks everything a run needs from the local machine before any network access
// or write: the tree's shape (each arch's release JSON present and parseable), a git
// repository with an identity for --commit and no uncommitted change a commit would take
// along (commit.Check), a writable --pr-body. Without it these failed
// after the tree had been rewritten.
func (r *run) preflight(ctx context.Context) error {
	r.releaseData = map[string][]byte{}
	for _, a := range r.arches {
		rel := releasefile.RepoPath(a)
		data, err := safefile.ReadIn(r.opts.MicroShiftDir, rel, 0)
		if err != nil {
			return fmt.Errorf("%s %s: reading %s: expected MicroShift's release JSON for %s: %w", option.MicroShiftDir, r.opts.MicroShiftDir, rel, a, err)
		}
		if _, err := release.Read(data); err != nil {
			return fmt.Errorf("%s %s: %s: %w", option.MicroShiftDir, r.opts.MicroShiftDir, rel, err)
		}
		r.releaseData[a] = data
	}
	// A broken recipe is refused now, not after the fetches (recipe.Reconcile would refuse it too).
	if err := recipe.Validate(r.opts.MicroShiftDir, recipe.RecipeFiles, recipe.Components); err != nil {
		return fmt.Errorf("%s %s: %w", option.MicroShiftDir, r.opts.MicroShiftDir, err)
	}
	if sa := r.opts.SnapshotAssets; !strings.Contains(sa, "{commit}") && !strings.Contains(sa, "://") {
		if _, err := os.Stat(sa); err != nil {
			return fmt.Errorf("%s %s: expected a URL with {commit}, a directory or a tarball: %w", option.SnapshotAssets, sa, err)
		}
	}
	if r.opts.Commit && r.opts.Mode == ModeWrite {
		if err := commit.Check(ctx, r.opts.MicroShiftDir); err != nil {
			return err
		}
	}
	if r.opts.PRBody != "" {
		if err := prbody.CheckWritable(r.opts.PRBody); err != nil {
			return fmt.Errorf("%s %s: %w", option.PRBody, r.opts.PRBody, err)
		}
	}
	return nil
}

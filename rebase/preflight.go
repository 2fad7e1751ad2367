package rebase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
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
	if err := r.coversTreeArches(); err != nil {
		return err
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

// coversTreeArches refuses a run that would leave one of the tree's release JSONs behind: with
// --arch x86_64 on a tree that also has release-aarch64.json, the manifests and the lock would
// move to the new bundle while aarch64's images stayed the old ones and the lock forgot them —
// a half-applied rebase that exits 0. Under --check the arches are the lock's, so a lock that
// does not cover the tree is drift (exit 1), not the caller's mistake.
func (r *run) coversTreeArches() error {
	// A bounded look (one lstat per known arch, no listing and no open: a FIFO or a link to a
	// device named like a release file is named, never read).
	var left []string
	for _, a := range arch.Known() {
		if slices.Contains(r.arches, a) {
			continue
		}
		rel := releasefile.RepoPath(a)
		if _, err := os.Lstat(filepath.Join(r.opts.MicroShiftDir, filepath.FromSlash(rel))); err == nil {
			left = append(left, rel)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: %w", option.MicroShiftDir, r.opts.MicroShiftDir, err)
		}
	}
	if len(left) == 0 {
		return nil
	}
	if r.opts.Mode == ModeCheck {
		return fmt.Errorf("%s: the lock file %s records payloads for %s only, but the tree also has %s: a rebase covers every release JSON the tree has; run the rebase again without %s",
			option.Check, lock.Path, strings.Join(r.arches, ", "), strings.Join(left, ", "), option.Arches)
	}
	return option.Errorf(option.Arches, "%s leaves %s of %s %s unrebased: a rebase covers every release JSON the tree has (its manifests and lock would no longer match those images); add the missing arches or omit %s",
		strings.Join(r.arches, ","), strings.Join(left, ", "), option.MicroShiftDir, r.opts.MicroShiftDir, option.Arches)
}

package rebase

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// preflight checks everything a run needs from the local machine before any network access
// or write: the tree's shape (each arch's release JSON present and parseable), a git
// repository with an identity for --commit, a writable --pr-body. Without it these failed
// after the tree had been rewritten.
func (r *runner) preflight() error {
	r.releaseData = map[string][]byte{}
	for _, a := range r.src.Arches() {
		rel := releasefile.RepoPath(a)
		data, err := os.ReadFile(filepath.Join(r.opts.MicroShiftDir, filepath.FromSlash(rel)))
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
		if err := gitPreflight(r.opts.MicroShiftDir); err != nil {
			return err
		}
	}
	if r.opts.PRBody != "" {
		if err := checkWritable(r.opts.PRBody); err != nil {
			return fmt.Errorf("%s %s: %w", option.PRBody, r.opts.PRBody, err)
		}
	}
	return nil
}

// gitPreflight checks that --commit can commit: root is inside a git work tree and git knows
// who the author and committer are.
func gitPreflight(root string) error {
	if out, err := git(root, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
		return fmt.Errorf("%s: %s is not inside a git work tree", option.Commit, root)
	}
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := git(root, "var", v); err != nil {
			return fmt.Errorf("%s: git has no identity to commit with (set user.name and user.email): %w", option.Commit, err)
		}
	}
	return nil
}

// checkWritable tells whether a file can be written at p without changing anything: an
// existing regular file is opened for writing (not truncated), a new one is tried as a
// temporary sibling that is removed again.
func checkWritable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("expected a regular file, found %v", fi.Mode().Type())
	case err == nil:
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("not writable: %w", err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".lvms-rebase-pr-body-*")
	if err != nil {
		return fmt.Errorf("cannot create the file: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// replaceFile writes data to p through a temporary sibling and a rename, so a kill leaves
// the old file or the new one, never half of it.
func replaceFile(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".lvms-rebase-pr-body-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// Package tree writes a rendered file set into a MicroShift checkout atomically.
//
// The file set is a map of slash-separated paths relative to the checkout root to their
// bytes. Managed directories are those whose whole content the set replaces: files in them
// that the set lacks are removed. Nothing outside the set's paths and the managed
// directories is read for planning or written, except a transient work directory
// (".lvms-rebase-*") in the root that holds the new files and the backups of the old ones
// during the swap and is removed afterwards.
package tree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Plan says what a Write does (or did) to each path, relative to the root and sorted.
type Plan struct {
	Add       []string `json:"add,omitempty"`
	Change    []string `json:"change,omitempty"`
	Remove    []string `json:"remove,omitempty"`
	Unchanged []string `json:"unchanged,omitempty"`
}

// Changed reports whether the plan modifies the tree.
func (p *Plan) Changed() bool {
	return len(p.Add)+len(p.Change)+len(p.Remove) > 0
}

// Compute compares files with the tree at root. Remove lists the files under the managed
// directories that files lacks.
func Compute(root string, files map[string][]byte, managedDirs []string) (*Plan, error) {
	if err := validate(files, managedDirs); err != nil {
		return nil, err
	}
	p := &Plan{}
	for rel, data := range files {
		full := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.Add = append(p.Add, rel)
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", full, err)
		case fi.IsDir():
			return nil, fmt.Errorf("%s: expected a file, found a directory", full)
		case !fi.Mode().IsRegular():
			// A symlink or special file is replaced by a regular file.
			p.Change = append(p.Change, rel)
			continue
		}
		old, err := os.ReadFile(full)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", full, err)
		}
		if bytes.Equal(old, data) {
			p.Unchanged = append(p.Unchanged, rel)
		} else {
			p.Change = append(p.Change, rel)
		}
	}
	for _, dir := range managedDirs {
		full := filepath.Join(root, filepath.FromSlash(dir))
		fi, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("managed directory %s: %w", full, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("managed directory %s: expected a directory, found %v", full, fi.Mode().Type())
		}
		err = filepath.WalkDir(full, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, fp)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if _, keep := files[rel]; !keep {
				p.Remove = append(p.Remove, rel)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing managed directory %s: %w", full, err)
		}
	}
	sort.Strings(p.Add)
	sort.Strings(p.Change)
	sort.Strings(p.Remove)
	sort.Strings(p.Unchanged)
	return p, nil
}

// validate rejects paths that could escape the root or overlap each other.
func validate(files map[string][]byte, managedDirs []string) error {
	check := func(what, p string) error {
		if p == "" || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || p == "." ||
			p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("%s %q: expected a clean, relative, slash-separated path inside the root", what, p)
		}
		if strings.HasPrefix(p, ".lvms-rebase-") {
			return fmt.Errorf("%s %q: the name is reserved for the writer's work directory", what, p)
		}
		return nil
	}
	for _, d := range managedDirs {
		if err := check("managed directory", d); err != nil {
			return err
		}
	}
	for p := range files {
		if err := check("file", p); err != nil {
			return err
		}
		for q := range files {
			if strings.HasPrefix(q, p+"/") {
				return fmt.Errorf("file %q is also the parent directory of %q", p, q)
			}
		}
		for _, d := range managedDirs {
			if p == d {
				return fmt.Errorf("file %q is also a managed directory", p)
			}
		}
	}
	return nil
}

// Hooks for failure-injection tests; production code uses the os functions.
var (
	renameFn    = os.Rename
	writeFileFn = writeFileSync
)

// writeFileSync writes and fsyncs a staged file, so that a crash after the swap cannot
// leave a renamed-in but empty file behind.
func writeFileSync(name string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write makes the tree at root hold files and nothing else in the managed directories, and
// returns what it did. It is atomic: all new contents are first written to a work
// directory on the same file system; the old files are then moved aside and the new ones
// renamed into place; if any step fails, every completed step is undone so the tree is
// byte-identical to before. Existing files keep their mode; new ones get 0644. A Write
// whose plan has no changes writes nothing (no mtime changes).
func Write(root string, files map[string][]byte, managedDirs []string) (*Plan, error) {
	p, err := Compute(root, files, managedDirs)
	if err != nil {
		return nil, err
	}
	if !p.Changed() {
		return p, nil
	}
	work, err := os.MkdirTemp(root, ".lvms-rebase-")
	if err != nil {
		return nil, fmt.Errorf("creating work directory in %s: %w", root, err)
	}
	keep := false // backups stay when a rollback fails, so nothing is lost
	defer func() {
		if !keep {
			os.RemoveAll(work)
		}
	}()
	newDir := filepath.Join(work, "new")
	oldDir := filepath.Join(work, "old")

	// Stage: write every new content; the tree is not touched yet.
	for _, rel := range append(append([]string(nil), p.Add...), p.Change...) {
		mode := fs.FileMode(0o644)
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			mode = fi.Mode().Perm()
		}
		dst := filepath.Join(newDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("staging %s: %w", rel, err)
		}
		if err := writeFileFn(dst, files[rel], mode); err != nil {
			return nil, fmt.Errorf("staging %s: %w", rel, err)
		}
		// WriteFile applies the umask; the mode must be exactly the old file's.
		if err := os.Chmod(dst, mode); err != nil {
			return nil, fmt.Errorf("staging %s: %w", rel, err)
		}
	}

	s := &swap{root: root}
	if err := s.run(p, newDir, oldDir); err != nil {
		if rerr := s.rollback(); rerr != nil {
			keep = true
			return nil, fmt.Errorf("%w; restoring the tree also failed, backups kept in %s: %v", err, oldDir, rerr)
		}
		return nil, err
	}
	pruneEmptyDirs(root, p.Remove, managedDirs)
	return p, nil
}

// pruneEmptyDirs removes directories below a managed directory that removals left empty
// (git does not track them, so they would only confuse the next Compute). The managed
// directories themselves stay. Failures are ignored: the files are already in place.
func pruneEmptyDirs(root string, removed, managedDirs []string) {
	for _, rel := range removed {
		for dir := path.Dir(rel); dir != "." && dir != "/"; dir = path.Dir(dir) {
			inside := false
			for _, m := range managedDirs {
				inside = inside || strings.HasPrefix(dir, m+"/")
			}
			if !inside || os.Remove(filepath.Join(root, filepath.FromSlash(dir))) != nil {
				break
			}
		}
	}
}

// swap records each completed step so that rollback can undo them in reverse.
type swap struct {
	root string
	undo []func() error
}

func (s *swap) run(p *Plan, newDir, oldDir string) error {
	// Move aside what is replaced or removed.
	for _, rel := range append(append([]string(nil), p.Change...), p.Remove...) {
		live := filepath.Join(s.root, filepath.FromSlash(rel))
		bak := filepath.Join(oldDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(bak), 0o755); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
		if err := renameFn(live, bak); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
		s.undo = append(s.undo, func() error { return renameFn(bak, live) })
	}
	// Put the new contents in place.
	for _, rel := range append(append([]string(nil), p.Add...), p.Change...) {
		live := filepath.Join(s.root, filepath.FromSlash(rel))
		if err := s.mkdirAll(filepath.Dir(live)); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
		if err := renameFn(filepath.Join(newDir, filepath.FromSlash(rel)), live); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
		s.undo = append(s.undo, func() error { return os.Remove(live) })
	}
	return nil
}

// mkdirAll creates dir and the missing parents, recording each for rollback.
func (s *swap) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s: expected a directory", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		s.undo = append(s.undo, func() error { return os.Remove(d) })
	}
	return nil
}

func (s *swap) rollback() error {
	var errs []error
	for i := len(s.undo) - 1; i >= 0; i-- {
		if err := s.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

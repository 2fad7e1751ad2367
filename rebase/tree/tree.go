// Package tree writes a rendered file set into a MicroShift checkout atomically.
//
// The file set is a map of slash-separated paths relative to the checkout root to their
// bytes. Managed directories are those whose whole content the set replaces: files in them
// that the set lacks are removed. Nothing outside the set's paths and the managed
// directories is read for planning or written, except a transient work directory
// (".lvms-rebase-*") in the root that holds the new files, the journal and the backups of
// the old ones during the swap and is removed afterwards (journal.go). Lock serialises
// writers on one tree; Recover repairs a write that a kill interrupted.
package tree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// Changes say what a Write does (or did) to each path, relative to the root and sorted. (The
// `-o json` document calls them "plan"; the applier's Plan is a different thing: its gates.)
type Changes struct {
	Add       []string
	Change    []string
	Remove    []string
	Unchanged []string
}

// Changed reports whether the changes modify the tree.
func (p *Changes) Changed() bool {
	return len(p.Add)+len(p.Change)+len(p.Remove) > 0
}

// Summary says what the changes do in one line: "2 to add (a, b); 1 to change (c)".
func (p *Changes) Summary() string {
	var parts []string
	add := func(verb string, paths []string) {
		if len(paths) > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s (%s)", len(paths), verb, strings.Join(paths, ", ")))
		}
	}
	add("add", p.Add)
	add("change", p.Change)
	add("remove", p.Remove)
	return strings.Join(parts, "; ")
}

// Compute compares files with the tree at root. Remove lists the files under the managed
// directories that files lacks. A file is unchanged when it holds exactly its bytes and its
// executable bit is the one a write gives it (see fileMode); only a regular file of the
// same size is read. A special file (FIFO, device, socket) where a write would place or
// remove a file is an error naming it: nothing proves it is ours and no journal can restore it.
func Compute(root string, files map[string][]byte, managedDirs []string) (*Changes, error) {
	if err := validate(files, managedDirs); err != nil {
		return nil, err
	}
	p := &Changes{}
	for rel, data := range files {
		st, err := compareFile(root, rel, data)
		if err != nil {
			return nil, err
		}
		switch st {
		case cmpAbsent:
			p.Add = append(p.Add, rel)
		case cmpDiffers:
			p.Change = append(p.Change, rel)
		default:
			p.Unchanged = append(p.Unchanged, rel)
		}
	}
	for _, dir := range managedDirs {
		removed, err := unwanted(root, dir, files)
		if err != nil {
			return nil, err
		}
		p.Remove = append(p.Remove, removed...)
	}
	sort.Strings(p.Add)
	sort.Strings(p.Change)
	sort.Strings(p.Remove)
	sort.Strings(p.Unchanged)
	return p, nil
}

type comparison int

const (
	cmpAbsent comparison = iota
	cmpDiffers
	cmpSame
)

// compareFile says how the tree's rel compares with data.
func compareFile(root, rel string, data []byte) (comparison, error) {
	full := livePath(root, rel)
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cmpAbsent, nil
	case err != nil:
		return 0, fmt.Errorf("reading %s: %w", full, err)
	case fi.IsDir():
		return 0, fmt.Errorf("%s: expected a file, found a directory", full)
	case fi.Mode()&fs.ModeSymlink != 0:
		return cmpDiffers, nil // replaced by a regular file, never written through
	case !fi.Mode().IsRegular():
		return 0, specialFileError(rel, fi)
	case fi.Size() != int64(len(data)) || isExec(fi.Mode()) != isExec(newFileMode(data)):
		return cmpDiffers, nil
	}
	old, err := safefile.ReadFile(full, safefile.Options{Max: max(fi.Size(), 1)})
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", full, err)
	}
	if bytes.Equal(old, data) {
		return cmpSame, nil
	}
	return cmpDiffers, nil
}

func specialFileError(rel string, fi fs.FileInfo) error {
	return fmt.Errorf("%s: expected a regular file, found a %s; lvms-rebase replaces or removes only regular files and symlinks: remove it", rel, fileType(fi.Mode()))
}

// fileType names a file's type for messages ("named pipe", not "p---------").
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	}
	return "file of mode " + m.String()
}

// unwanted lists the files under the managed directory dir that files lacks.
func unwanted(root, dir string, files map[string][]byte) ([]string, error) {
	full := livePath(root, dir)
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("managed directory %s: %w", full, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("managed directory %s: expected a directory, found a %s", full, fileType(fi.Mode()))
	}
	var out []string
	err = filepath.WalkDir(full, func(fp string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, fp)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, keep := files[rel]; keep {
			return nil
		}
		if t := d.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
			info, err := d.Info()
			if err != nil {
				return err
			}
			return specialFileError(rel, info)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing managed directory %s: %w", full, err)
	}
	return out, nil
}

// validate rejects paths that could escape the root, overlap each other, or name one file
// twice on a case-insensitive file system (a checkout on macOS).
func validate(files map[string][]byte, managedDirs []string) error {
	for _, d := range managedDirs {
		if err := checkRel("managed directory", d); err != nil {
			return err
		}
	}
	folded := make(map[string]string, len(files))
	for p := range files {
		if err := checkRel("file", p); err != nil {
			return err
		}
		if q, ok := folded[strings.ToLower(p)]; ok {
			a, b := min(p, q), max(p, q)
			return fmt.Errorf("files %q and %q differ only in case: they are one file on a case-insensitive file system (a checkout on macOS)", a, b)
		}
		folded[strings.ToLower(p)] = p
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

// checkRel accepts a clean, relative, slash-separated path inside the root that is neither
// the work directory's nor inside a .git directory: every path a write or a recovery touches
// passes it.
func checkRel(what, p string) error {
	if p == "" || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || p == "." ||
		p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("%s %q: expected a clean, relative, slash-separated path inside the root", what, p)
	}
	if strings.HasPrefix(p, workPrefix) {
		return fmt.Errorf("%s %q: the name is reserved for the writer's work directory", what, p)
	}
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("%s %q: inside a .git directory, which is git's own", what, p)
		}
	}
	return nil
}

// Hooks for failure-injection tests; production code uses the os functions.
var (
	renameFn    = os.Rename
	writeFileFn = writeFileSync
	stageFileFn = os.WriteFile
	syncFn      = (*os.File).Sync
)

// stageSyncs bounds the fsyncs in flight (the staged files, later the directories renamed
// into). Issued together, the file system commits them in one or a few journal
// transactions; one after another, a cold run waited for ~40 of them in a row after its
// last byte had arrived.
const stageSyncs = 16

// writeFileSync writes one of the write's own records (the journal, the commit marker)
// durably through applier/atomicfile, so that after a crash it is either absent or complete.
func writeFileSync(name string, data []byte, perm fs.FileMode) error {
	_, err := atomicfile.WriteFile(name, data, perm)
	return err
}

// Write makes the tree at root hold files and nothing else in the managed directories, and
// returns what it did. It is atomic and journaled (see journal.go): all new contents are
// first written to a work directory on the same file system, the intent is recorded, the old
// files are moved aside and the new ones renamed into place; if any step fails, the journal
// is rolled back so the tree is byte-identical to before, and a process killed at any point
// leaves a state Recover repairs. Nothing is written through a symlink that leads out of the
// root. Modes: see fileMode. A Write with no changes writes nothing (no mtime changes).
// Callers hold Lock.
func Write(root string, files map[string][]byte, managedDirs []string) (*Changes, error) {
	return WriteContext(context.Background(), root, files, managedDirs)
}

// WriteContext is Write that stops, with the tree untouched, when ctx is done before the
// swap starts (files are staged); once the journal is written the swap is always completed
// or rolled back, whatever ctx says, so an interruption never leaves a half-written tree.
// The caller checks ctx afterwards to stop what would follow the write.
func WriteContext(ctx context.Context, root string, files map[string][]byte, managedDirs []string) (*Changes, error) {
	p, err := Compute(root, files, managedDirs)
	if err != nil {
		return nil, err
	}
	if !p.Changed() {
		return p, nil
	}
	if err := checkInside(root, p); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(root, workPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating work directory in %s: %w", root, err)
	}
	keep := false // backups stay when a rollback fails, so nothing is lost
	defer func() {
		if !keep {
			os.RemoveAll(work) // made by this process moments ago
		}
	}()
	step := func(s string) { stepHook(ctx, s) }
	j, err := prepare(root, work, p, files, managedDirs, step)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("stopped before the swap (the tree is untouched): %w", ctx.Err())
	}
	if err := j.save(work); err != nil {
		return nil, err
	}
	step("journaled")
	err = j.apply(root, work, step)
	if err == nil {
		step("placed")
		err = j.markCommitted(root, work)
	}
	if err != nil {
		if rerr := j.undo(root, work); rerr != nil {
			keep = true
			return nil, fmt.Errorf("%w; restoring the tree also failed, backups kept in %s: %v", err, filepath.Join(work, "old"), rerr)
		}
		return nil, err
	}
	step("committed")
	pruneEmptyDirs(root, p.Remove, managedDirs)
	return p, nil
}

// prepare records the owner of the work directory just made, stages the new contents in it
// and returns the journal of the swap (not yet saved): everything before the tree is touched.
func prepare(root, work string, p *Changes, files map[string][]byte, managedDirs []string, step func(string)) (*journal, error) {
	step("created")
	own, err := claim(root, work)
	if err != nil {
		return nil, err
	}
	step("owned")
	modes := make(map[string]fs.FileMode, len(p.Add)+len(p.Change))
	for _, rel := range append(append([]string(nil), p.Add...), p.Change...) {
		modes[rel] = fileMode(root, rel, files[rel])
	}
	if err := stage(filepath.Join(work, "new"), p, files, modes, step); err != nil {
		return nil, err
	}
	return newJournal(root, own, p, files, modes, managedDirs)
}

// newFileMode is the mode of a file the tree does not have yet: a script (a "#!" first line,
// like MicroShift's last_rebase_lvms.sh, which maintainers run to repeat a rebase) is
// executable, anything else 0644.
func newFileMode(data []byte) fs.FileMode {
	if bytes.HasPrefix(data, []byte("#!")) {
		return 0o755
	}
	return 0o644
}

// fileMode is the mode a write gives rel. The executable bit — the part of a mode git
// records — belongs to the content, as MicroShift's own rebase scripts decide it (they
// chmod +x the records they write): a "#!" script is executable, any other file is not, so
// a mode-only hand edit of it is a change a write repairs and --check reports. The other
// permission bits of an existing regular file are the person's and stay (a 0600 file stays
// private); a new file gets newFileMode.
func fileMode(root, rel string, data []byte) fs.FileMode {
	want := newFileMode(data)
	fi, err := os.Lstat(livePath(root, rel))
	if err != nil || !fi.Mode().IsRegular() {
		return want
	}
	perm := fi.Mode().Perm()
	if !isExec(want) {
		return perm &^ 0o111
	}
	return perm | 0o100 | (perm&0o044)>>2
}

// isExec is git's reading of a mode: executable when the owner may execute it.
func isExec(m fs.FileMode) bool { return m&0o100 != 0 }

// stage writes every new content under newDir and makes it durable; the tree is not
// touched yet. The journal is written only after every staged file is synced, so a crash
// after the swap cannot leave a renamed-in but empty file behind.
func stage(newDir string, p *Changes, files map[string][]byte, modes map[string]fs.FileMode, step func(string)) error {
	rels := append(append([]string(nil), p.Add...), p.Change...)
	if err := writeStaged(newDir, rels, files, modes, step); err != nil {
		return err
	}
	return syncStaged(newDir, rels)
}

// writeStaged writes each staged file with the mode it will have in the tree.
func writeStaged(newDir string, rels []string, files map[string][]byte, modes map[string]fs.FileMode, step func(string)) error {
	for _, rel := range rels {
		dst := filepath.Join(newDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("staging %s: %w", rel, err)
		}
		step("stage " + rel)
		if err := stageFileFn(dst, files[rel], modes[rel]); err != nil {
			return fmt.Errorf("staging %s: %w", rel, err)
		}
		// WriteFile applies the umask; the mode must be exactly the one decided.
		if err := os.Chmod(dst, modes[rel]); err != nil {
			return fmt.Errorf("staging %s: %w", rel, err)
		}
	}
	return nil
}

// syncStaged fsyncs the staged files together (see syncEach).
func syncStaged(newDir string, rels []string) error {
	names := make([]string, len(rels))
	for i, rel := range rels {
		names[i] = filepath.Join(newDir, filepath.FromSlash(rel))
	}
	if i, err := syncEach(names, syncFile); err != nil {
		return fmt.Errorf("staging %s: %w", rels[i], err)
	}
	return nil
}

// syncEach runs syncOne on every name, stageSyncs at a time, and returns the first failure in
// names' order (the same error whichever sync finished first) with its index.
func syncEach(names []string, syncOne func(string) error) (int, error) {
	errs := make([]error, len(names))
	sem := make(chan struct{}, stageSyncs)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = syncOne(name)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return 0, nil
}

func syncFile(name string) error {
	f, err := os.Open(name) // safefile: a file this write staged, opened to sync it
	if err != nil {
		return err
	}
	err = syncFn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkInside refuses changes whose paths lead, through a symlinked directory, out of the
// root (a symlinked scripts/ would otherwise receive the lock file somewhere else). A path
// that is itself a symlink is fine: the rename replaces the link, it does not write through it.
func checkInside(root string, p *Changes) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolving the tree %s: %w", root, err)
	}
	for _, rel := range append(append(append([]string(nil), p.Add...), p.Change...), p.Remove...) {
		dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(rel)))
		real, err := evalExisting(dir)
		if err != nil {
			return fmt.Errorf("resolving the directory of %s: %w", rel, err)
		}
		if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return fmt.Errorf("refusing to write %s: its directory leads out of %s through a symlink (to %s)", rel, root, real)
		}
	}
	return nil
}

// evalExisting resolves the symlinks of the longest existing prefix of dir.
func evalExisting(dir string) (string, error) {
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = filepath.Dir(dir)
	}
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
			full := filepath.Join(root, filepath.FromSlash(dir))
			if fi, err := os.Lstat(full); !inside || err != nil || !fi.IsDir() || os.Remove(full) != nil {
				break
			}
		}
	}
}

package tree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// Recovery of an interrupted Write (see journal.go) verifies before it acts:
//
//   - The journal is validated like any write: every path clean, relative and inside the
//     root, not the work directory's name, removals inside the managed directories, created
//     directories parents of added files, and no path (in the tree or in the work directory)
//     leading through a symlink. A journal that fails is refused whole; nothing is touched.
//   - Each file is classified by its current bytes: as before the swap, as the swap wrote
//     it, moved aside (absent, with a backup holding exactly the old bytes), or anything
//     else: a conflict (a person edited it, or a backup is missing or altered).
//   - The write rolls forward (only the backups are dropped) when the committed marker
//     exists and the files agree with it: none is still as before or moved aside. Otherwise
//     it rolls back, so an incomplete swap is never completed on the marker's word alone.
//   - A conflicting file is left exactly as it is, with its backup; the work directory is
//     kept and the error names every such file with what to do.
//
// Each step is idempotent: a kill during recovery is repaired by the next one.

// ErrRecoveryConflict is wrapped by Recover when files changed after the interrupted write.
var ErrRecoveryConflict = errors.New("files changed since an interrupted lvms-rebase write")

// Recovery says what Recover did, or Pending would do, with one interrupted write.
type Recovery struct {
	// Dir is the work directory, relative to the root.
	Dir string
	// Action is "rolled back", "rolled forward" or "discarded" (staging only, tree untouched).
	Action string
	// Pending is set by Pending: the action is what a recovery would do; nothing was done.
	Pending bool
	// Paths are the files the interrupted write covered.
	Paths []string
	// Conflicts are the files left alone because their bytes are neither the journaled old
	// nor new ones (or their backup is not the old one).
	Conflicts []Conflict
}

// Conflict is one file a recovery does not touch, with why and what to do about it.
type Conflict struct {
	Path    string
	Problem string
	Resolve string
}

func (c Conflict) String() string { return c.Path + ": " + c.Problem + "; " + c.Resolve }

func (r Recovery) String() string {
	if r.Pending {
		switch r.Action {
		case "discarded":
			return fmt.Sprintf("an interrupted lvms-rebase left staged files in %s before touching the tree; the next write discards them", r.Dir)
		case "rolled back":
			return fmt.Sprintf("an interrupted lvms-rebase write (%s) is pending: the next write rolls it back (%d files)%s", r.Dir, len(r.Paths), r.conflictNote())
		}
		return fmt.Sprintf("an interrupted lvms-rebase write (%s) is pending: it had placed every file; the next write rolls it forward%s", r.Dir, r.conflictNote())
	}
	switch r.Action {
	case "discarded":
		return fmt.Sprintf("an interrupted lvms-rebase left staged files in %s before touching the tree; discarded them", r.Dir)
	case "rolled back":
		return fmt.Sprintf("an interrupted lvms-rebase write (%s) was rolled back: %d files restored to their state before that run%s", r.Dir, len(r.Paths)-len(r.Conflicts), r.conflictNote())
	}
	return fmt.Sprintf("an interrupted lvms-rebase write (%s) had placed every file; rolled it forward (backups dropped)%s", r.Dir, r.conflictNote())
}

func (r Recovery) conflictNote() string {
	if len(r.Conflicts) == 0 {
		return ""
	}
	return fmt.Sprintf(", except %d files changed since that run, left as they are", len(r.Conflicts))
}

// Recover repairs the tree after an interrupted Write and says what it did. Call it only
// while holding Lock: a concurrent Write's work directory looks just like an interrupted one.
// Files changed since the interrupted write are left alone and reported (an error wrapping
// ErrRecoveryConflict, the work directory kept); an invalid journal is refused whole.
func Recover(root string) ([]Recovery, error) {
	return walkWork(root, func(w *interrupted) (Recovery, error) { return w.recover() })
}

// Pending reports the interrupted writes Recover would repair, and how, without modifying
// anything (for runs that only plan, diff or check).
func Pending(root string) ([]Recovery, error) {
	return walkWork(root, func(w *interrupted) (Recovery, error) {
		rec := w.rec
		rec.Pending = true
		return rec, nil
	})
}

func walkWork(root string, do func(*interrupted) (Recovery, error)) ([]Recovery, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("looking for interrupted writes in %s: %w", root, err)
	}
	var out []Recovery
	for _, e := range entries {
		// ReadDir does not follow symlinks: a symlink named like a work directory is ignored.
		if !e.IsDir() || !strings.HasPrefix(e.Name(), workPrefix) {
			continue
		}
		w, err := inspect(root, e.Name())
		if err != nil {
			return out, err
		}
		rec, err := do(w)
		out = append(out, rec)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// interrupted is one interrupted write as found on disk, classified but not yet acted on.
type interrupted struct {
	root, work string
	j          *journal // nil: no journal, the tree was never touched
	files      []assessed
	forward    bool
	rec        Recovery
}

// fileState is where one journaled file stands.
type fileState int

const (
	atOld    fileState = iota // the bytes before the swap (absent for an add)
	atNew                     // the bytes the swap writes (absent for a remove)
	movedOut                  // a change moved aside and not yet replaced: absent, backup verified
	conflict                  // anything else
)

type assessed struct {
	entry
	state    fileState
	backupOK bool // the backup holds exactly the old bytes
}

// inspect reads, validates and classifies one work directory. It modifies nothing.
func inspect(root, name string) (*interrupted, error) {
	w := &interrupted{root: root, work: filepath.Join(root, name), rec: Recovery{Dir: name, Action: "discarded"}}
	j, err := readJournal(w.work)
	if err != nil || j == nil {
		return w, err
	}
	if err := j.validate(root, w.work); err != nil {
		return nil, fmt.Errorf("interrupted write %s: %w; recovery touched nothing: the journal was not written by this lvms-rebase or was altered; inspect %s (backups are in its old/) and remove it", w.work, err, w.work)
	}
	if err := w.classify(j, true); err != nil {
		return nil, err
	}
	return w, nil
}

// classify assesses every file of j and chooses the direction: forward only when allowed and
// the marker agrees with the files.
func (w *interrupted) classify(j *journal, mayForward bool) error {
	w.j = j
	for _, e := range j.Files {
		a, err := assess(w.root, w.work, e)
		if err != nil {
			return fmt.Errorf("interrupted write %s: reading %s: %w", w.work, e.Path, err)
		}
		w.files = append(w.files, a)
		w.rec.Paths = append(w.rec.Paths, e.Path)
	}
	w.forward = mayForward && w.agreesWithMarker()
	w.rec.Action = "rolled back"
	if w.forward {
		w.rec.Action = "rolled forward"
	}
	for _, a := range w.files {
		if c, ok := w.conflictOf(a); ok {
			w.rec.Conflicts = append(w.rec.Conflicts, c)
		}
	}
	return nil
}

// undo rolls back a Write that failed in this process (never forward: the caller reports
// the failure, so the tree must be as before).
func (j *journal) undo(root, work string) error {
	w := &interrupted{root: root, work: work}
	if err := w.classify(j, false); err != nil {
		return err
	}
	errs := []error{w.rollback()}
	for _, c := range w.rec.Conflicts {
		errs = append(errs, errors.New(c.String()))
	}
	return errors.Join(errs...)
}

// readJournal returns nil when the work directory holds no journal (staging only).
func readJournal(work string) (*journal, error) {
	p := filepath.Join(work, journalName)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("expected a regular file, found %v", fi.Mode().Type())
	}
	var b []byte
	if err == nil {
		b, err = safefile.ReadFile(p, safefile.Options{})
	}
	j := &journal{}
	if err == nil {
		err = json.Unmarshal(b, j)
	}
	if err != nil {
		return nil, fmt.Errorf("interrupted write %s: unreadable journal (backups are in %s/old): %w", work, work, err)
	}
	return j, nil
}

// agreesWithMarker reports whether the committed marker exists (a regular file) and no file
// contradicts it by being still as before the swap or moved aside.
func (w *interrupted) agreesWithMarker() bool {
	fi, err := os.Lstat(filepath.Join(w.work, committedName))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, a := range w.files {
		if a.state == atOld || a.state == movedOut {
			return false
		}
	}
	return true
}

var fingerprintRE = regexp.MustCompile(`^(sha256:[0-9a-f]{64}|symlink:.+)$`)

// validate checks the journal like any write's paths (see the comment at the top).
func (j *journal) validate(root, work string) error {
	if j.Version != journalVersion {
		return fmt.Errorf("journal version %d, expected %d (files cannot be verified without the fingerprints it records)", j.Version, journalVersion)
	}
	if len(j.Files) == 0 {
		return errors.New("journal lists no files")
	}
	for _, d := range j.Managed {
		if err := checkRel("journal managed directory", d); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, e := range j.Files {
		if err := j.validateEntry(e, seen); err != nil {
			return err
		}
		for _, p := range []struct{ base, rel string }{{root, e.Path}, {work, "old/" + e.Path}, {work, "new/" + e.Path}} {
			if err := noSymlinkHop(p.base, p.rel); err != nil {
				return fmt.Errorf("journal entry %q: %w", e.Path, err)
			}
		}
	}
	for _, d := range j.Dirs {
		if err := j.validateDir(root, d); err != nil {
			return err
		}
	}
	return nil
}

func (j *journal) validateEntry(e entry, seen map[string]bool) error {
	if err := checkRel("journal entry", e.Path); err != nil {
		return err
	}
	if seen[e.Path] {
		return fmt.Errorf("journal entry %q: listed twice", e.Path)
	}
	seen[e.Path] = true
	if (e.Old == "" && e.New == "") || e.Old == e.New ||
		(e.Old != "" && !fingerprintRE.MatchString(e.Old)) ||
		(e.New != "" && !strings.HasPrefix(e.New, "sha256:")) || (e.New != "" && !fingerprintRE.MatchString(e.New)) {
		return fmt.Errorf("journal entry %q: expected an old and/or a new fingerprint (sha256:<hex>), got old %q, new %q", e.Path, e.Old, e.New)
	}
	if e.New == "" && !under(e.Path, j.Managed) {
		return fmt.Errorf("journal entry %q: a removal outside the managed directories %v", e.Path, j.Managed)
	}
	return nil
}

// validateDir accepts a created directory only as a parent of an added file, and only if
// what is there now is a real directory (removing a symlink named like it would delete the link).
func (j *journal) validateDir(root, d string) error {
	if err := checkRel("journal directory", d); err != nil {
		return err
	}
	parent := false
	for _, e := range j.Files {
		parent = parent || (e.Old == "" && strings.HasPrefix(e.Path, d+"/"))
	}
	if !parent {
		return fmt.Errorf("journal directory %q: not the parent of any file the write added", d)
	}
	if err := noSymlinkHop(root, d+"/x"); err != nil {
		return fmt.Errorf("journal directory %q: %w", d, err)
	}
	return nil
}

func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// noSymlinkHop fails when a directory on the way from base to rel (rel itself excluded) is a
// symlink or not a directory. Missing directories are fine: nothing below them exists.
func noSymlinkHop(base, rel string) error {
	dir := ""
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = path.Join(dir, part)
		fi, err := os.Lstat(filepath.Join(base, filepath.FromSlash(dir)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s leads through the symlink %s", rel, filepath.Join(base, filepath.FromSlash(dir)))
		case !fi.IsDir():
			return fmt.Errorf("%s: %s is not a directory", rel, filepath.Join(base, filepath.FromSlash(dir)))
		}
	}
	return nil
}

// assess classifies one file by its current bytes and checks its backup.
func assess(root, work string, e entry) (assessed, error) {
	a := assessed{entry: e, state: conflict}
	cur, err := fingerprint(livePath(root, e.Path))
	if err != nil {
		return a, err
	}
	if e.Old != "" {
		bak, err := fingerprint(filepath.Join(work, "old", filepath.FromSlash(e.Path)))
		if err != nil {
			return a, err
		}
		a.backupOK = bak == e.Old
	}
	switch {
	case cur == e.New:
		a.state = atNew
	case cur == e.Old:
		a.state = atOld
	case cur == "" && a.backupOK:
		a.state = movedOut
	}
	return a, nil
}

// conflictOf says whether the chosen direction leaves a file alone, and what to tell about it.
func (w *interrupted) conflictOf(a assessed) (Conflict, bool) {
	bak := filepath.Join(w.work, "old", filepath.FromSlash(a.Path))
	done := "then remove " + w.work + " and run again"
	switch {
	case a.state == conflict && a.Old != "" && a.backupOK:
		return Conflict{a.Path, "changed since the interrupted write (neither its content before that run nor the one it wrote); left as it is",
			"keep your version or copy back " + bak + " (its content before that run), " + done}, true
	case a.state == conflict:
		return Conflict{a.Path, "changed since the interrupted write (neither its content before that run nor the one it wrote) and no intact backup; left as it is",
			"check it (git diff -- " + a.Path + "), " + done}, true
	case !w.forward && a.state == atNew && a.Old != "" && !a.backupOK:
		return Conflict{a.Path, "holds what the interrupted run wrote, but its backup " + bak + " is missing or altered; left as it is",
			"restore it from version control (git checkout -- " + a.Path + ") if that content is wrong, " + done}, true
	}
	return Conflict{}, false
}

// recover acts on the classification: discard a staging, roll back or forward, and keep the
// work directory (with an error) when anything was left alone or failed.
func (w *interrupted) recover() (Recovery, error) {
	rec := w.rec
	if w.j == nil {
		return rec, removeWork(w.work)
	}
	if w.forward {
		pruneEmptyDirs(w.root, w.j.paths(func(e entry) bool { return e.New == "" }), w.j.Managed)
	} else if err := w.rollback(); err != nil {
		return rec, fmt.Errorf("rolling back the interrupted write %s (backups kept in %s/old): %w", w.work, w.work, err)
	}
	if len(rec.Conflicts) > 0 {
		var lines []string
		for _, c := range rec.Conflicts {
			lines = append(lines, c.String())
		}
		return rec, fmt.Errorf("interrupted write %s: %w, left as they are (the rest was %s): %s", w.work, ErrRecoveryConflict, rec.Action, strings.Join(lines, "; "))
	}
	return rec, removeWork(w.work)
}

// rollback returns every verified file to its state before the swap, from the state on disk
// alone: a placed file is removed when its backup (if it had one) is intact, and each intact
// backup is renamed back; created directories are removed when empty. Conflicting files are
// not touched. It continues past errors and reports them all.
func (w *interrupted) rollback() error {
	var errs []error
	restore := func(a assessed) {
		stepHook(context.Background(), "undo restore "+a.Path)
		if err := renameFn(filepath.Join(w.work, "old", filepath.FromSlash(a.Path)), livePath(w.root, a.Path)); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", a.Path, err))
		}
	}
	for _, a := range w.files {
		switch {
		case a.state == movedOut:
			restore(a)
		case a.state == atNew && (a.Old == "" || a.backupOK):
			if a.New != "" {
				stepHook(context.Background(), "undo remove "+a.Path)
				if err := os.Remove(livePath(w.root, a.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, fmt.Errorf("removing %s: %w", a.Path, err))
					continue
				}
			}
			if a.Old != "" {
				restore(a)
			}
		}
	}
	for i := len(w.j.Dirs) - 1; i >= 0; i-- {
		d := livePath(w.root, w.j.Dirs[i])
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		if entries, err := os.ReadDir(d); err == nil && len(entries) > 0 {
			continue // holds a file left alone
		}
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing created directory %s: %w", w.j.Dirs[i], err))
		}
	}
	return errors.Join(errs...)
}

func removeWork(work string) error {
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("removing %s: %w", work, err)
	}
	return nil
}

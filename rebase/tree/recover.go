package tree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Recovery of an interrupted Write (see journal.go) verifies before it acts:
//
//   - A directory named like a work directory must prove it is one a Write made in this tree
//     (owner.go). One that does not is left alone and named — a staging it cannot prove is
//     just not deleted; a journal it cannot prove is refused, touching nothing, since the
//     tree may be half-swapped and only a person can tell.
//   - The journal is validated like any write: every path clean, relative and inside the
//     root, not the work directory's name nor inside .git, a path a write produces (Scope),
//     removals inside the managed directories, created directories parents of added files,
//     and no path (in the tree or in the work directory) leading through a symlink. A journal
//     that fails is refused whole; nothing is touched.
//   - Each file is classified by its current bytes and mode: as before the swap, as the swap
//     wrote it, moved aside (absent, with a backup holding exactly the old bytes and mode), or
//     anything else: a conflict (a person edited it, or a backup is missing or altered).
//   - The write rolls forward (only the backups are dropped) when the committed marker
//     exists and the files agree with it: none is still as before or moved aside. Otherwise
//     it rolls back, so an incomplete swap is never completed on the marker's word alone.
//   - A file the chosen direction would touch but whose state is not the journaled one — its
//     bytes, or only its mode — is left exactly as it is, with its backup; the work directory
//     is kept and the error names every such file with what to do, in words that fit it
//     (added, changed or removed by the interrupted write).
//
// Each step is idempotent: a kill during recovery is repaired by the next one.

// ErrRecoveryConflict is wrapped by Recover when files changed after the interrupted write.
var ErrRecoveryConflict = errors.New("files changed since an interrupted lvms-rebase write")

// The actions of a Recovery.
const (
	ActionDiscarded     = "discarded"
	ActionRolledBack    = "rolled back"
	ActionRolledForward = "rolled forward"
	ActionLeftAlone     = "left alone"
)

// Scope is every path a write into the tree may produce: the files under Dirs (the managed
// directories, whose whole content a write replaces) and the files Files. Recovery acts on a
// journal only when every path it names is in the scope, whatever the journal says about
// itself: a hand-made or altered journal can never delete Makefile or plant a git hook.
type Scope struct {
	Dirs  []string
	Files []string
}

// Contains reports whether p is a path a write may produce.
func (s Scope) Contains(p string) bool {
	return slices.Contains(s.Files, p) || under(p, s.Dirs)
}

// Covers returns an error naming every path of files that is not in the scope (a write of
// them could not be recovered), or that the scope itself is not a set of tree paths.
func (s Scope) Covers(files map[string][]byte, managedDirs []string) error {
	if err := s.check(); err != nil {
		return err
	}
	var out []string
	for p := range files {
		if !s.Contains(p) {
			out = append(out, p)
		}
	}
	for _, d := range managedDirs {
		if !slices.Contains(s.Dirs, d) {
			out = append(out, d+"/")
		}
	}
	if len(out) > 0 {
		sort.Strings(out)
		return fmt.Errorf("writing %s: outside the paths a recovery accepts (%s)", strings.Join(out, ", "), s)
	}
	return nil
}

// Holds reports whether the file-system path p (absolute, or relative to the working
// directory), once its symlinks are resolved, is a path of the scope in the tree at root or
// lies inside one — something a write replaces or removes — and returns it relative to the
// root. Callers refuse output paths (a cache, a PR body) for which it is true.
func (s Scope) Holds(root, p string) (string, bool, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false, fmt.Errorf("resolving the tree %s: %w", root, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false, err
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", false, fmt.Errorf("resolving %s: %w", p, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return "", false, nil
	}
	rel = filepath.ToSlash(rel)
	for _, f := range s.Files {
		if rel == f || strings.HasPrefix(rel, f+"/") {
			return rel, true, nil
		}
	}
	return rel, slices.Contains(s.Dirs, rel) || under(rel, s.Dirs), nil
}

func (s Scope) check() error {
	if len(s.Dirs)+len(s.Files) == 0 {
		return errors.New("tree: empty scope: no path a write produces was given")
	}
	for _, d := range s.Dirs {
		if err := checkRel("scope directory", d); err != nil {
			return err
		}
	}
	for _, f := range s.Files {
		if err := checkRel("scope file", f); err != nil {
			return err
		}
	}
	return nil
}

func (s Scope) String() string {
	dirs := make([]string, len(s.Dirs))
	for i, d := range s.Dirs {
		dirs[i] = d + "/"
	}
	return strings.Join(append(dirs, s.Files...), ", ")
}

// Recovery says what Recover did, or Pending would do, with one directory named like a work
// directory.
type Recovery struct {
	// Dir is the work directory, relative to the root.
	Dir string
	// Action is "rolled back", "rolled forward", "discarded" (staging only, tree untouched)
	// or "left alone" (not proven a work directory of this tree; see Reason).
	Action string
	// Reason says why a directory was left alone, or what was kept of a recovered one.
	Reason string
	// Pending is set by Pending: the action is what a recovery would do; nothing was done.
	Pending bool
	// Paths are the files the interrupted write covered.
	Paths []string
	// Conflicts are the files left alone because their state is neither the journaled old
	// nor new one (or their backup is not the old one).
	Conflicts []Conflict
}

// Interrupted reports whether r is an interrupted write that touched the tree (rolled back
// or forward), as opposed to a staging discarded or a directory left alone.
func (r Recovery) Interrupted() bool {
	return r.Action == ActionRolledBack || r.Action == ActionRolledForward
}

// Conflict is one file a recovery does not touch, with why and what to do about it.
type Conflict struct {
	Path    string
	Problem string
	Resolve string
}

func (c Conflict) String() string { return c.Path + ": " + c.Problem + "; " + c.Resolve }

func (r Recovery) String() string {
	if r.Action == ActionLeftAlone {
		return fmt.Sprintf("%s is named like an lvms-rebase work directory, but %s; left alone (rename it, or remove it if nothing in it is needed)", r.Dir, r.Reason)
	}
	if r.Pending {
		switch r.Action {
		case ActionDiscarded:
			return fmt.Sprintf("an interrupted lvms-rebase left staged files in %s before touching the tree; the next write discards them", r.Dir)
		case ActionRolledBack:
			return fmt.Sprintf("an interrupted lvms-rebase write (%s) is pending: the next write rolls it back (%d files)%s", r.Dir, len(r.Paths), r.conflictNote())
		}
		return fmt.Sprintf("an interrupted lvms-rebase write (%s) is pending: it had placed every file; the next write rolls it forward%s", r.Dir, r.conflictNote())
	}
	var msg string
	switch r.Action {
	case ActionDiscarded:
		msg = fmt.Sprintf("an interrupted lvms-rebase left staged files in %s before touching the tree; discarded them", r.Dir)
	case ActionRolledBack:
		msg = fmt.Sprintf("an interrupted lvms-rebase write (%s) was rolled back: %d files restored to their state before that run%s", r.Dir, len(r.Paths)-len(r.Conflicts), r.conflictNote())
	default:
		msg = fmt.Sprintf("an interrupted lvms-rebase write (%s) had placed every file; rolled it forward (backups dropped)%s", r.Dir, r.conflictNote())
	}
	if r.Reason != "" {
		msg += "; " + r.Reason
	}
	return msg
}

func (r Recovery) conflictNote() string {
	if len(r.Conflicts) == 0 {
		return ""
	}
	return fmt.Sprintf(", except %d files changed since that run, left as they are", len(r.Conflicts))
}

// Recover repairs the tree after an interrupted Write and says what it did, also naming the
// directories it left alone. Call it only while holding Lock: a concurrent Write's work
// directory looks just like an interrupted one. scope is every path a write produces (the
// caller's, never the journal's word). Files changed since the interrupted write are left
// alone and reported (an error wrapping ErrRecoveryConflict, the work directory kept); an
// invalid or unprovable journal is refused whole.
func Recover(root string, scope Scope) ([]Recovery, error) {
	return walkWork(root, scope, func(w *interrupted) (Recovery, error) { return w.recover() })
}

// Pending reports what Recover would do, and how, without modifying anything (for runs that
// only plan, diff or check).
func Pending(root string, scope Scope) ([]Recovery, error) {
	return walkWork(root, scope, func(w *interrupted) (Recovery, error) {
		rec := w.rec
		rec.Pending = w.rec.Action != ActionLeftAlone
		return rec, nil
	})
}

func walkWork(root string, scope Scope, do func(*interrupted) (Recovery, error)) ([]Recovery, error) {
	if err := scope.check(); err != nil {
		return nil, err
	}
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
		w, err := inspect(root, e.Name(), scope)
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
	backupOK bool   // the backup holds exactly the old bytes, with the old mode
	modeNow  string // atNew under another mode than the journaled one: that mode
}

// inspect reads, proves, validates and classifies one work directory. It modifies nothing.
func inspect(root, name string, scope Scope) (*interrupted, error) {
	w := &interrupted{root: root, work: filepath.Join(root, name), rec: Recovery{Dir: name}}
	j, err := readJournal(w.work)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return w, w.inspectStaging(name)
	}
	refuse := func(err error) error {
		return fmt.Errorf("interrupted write %s: %w; recovery touched nothing: the journal was not written by this lvms-rebase for this tree, or was altered; inspect %s (backups are in its old/) and remove it", w.work, err, w.work)
	}
	if j.Version != journalVersion {
		return nil, refuse(fmt.Errorf("journal version %d, expected %d (an earlier lvms-rebase's journal records no owner and no modes: it cannot be verified)", j.Version, journalVersion))
	}
	if err := j.Owner.proves(root, w.work); err != nil {
		return nil, refuse(err)
	}
	if err := j.validate(root, w.work, scope); err != nil {
		return nil, refuse(err)
	}
	if err := w.classify(j, true); err != nil {
		return nil, err
	}
	return w, nil
}

// inspectStaging decides about a directory without a journal: the staging of a Write killed
// before it touched the tree when it proves so (discarded), anything else left alone.
func (w *interrupted) inspectStaging(name string) error {
	entries, err := os.ReadDir(w.work)
	if err != nil {
		return fmt.Errorf("looking for interrupted writes in %s: %w", w.work, err)
	}
	leave := func(reason string) error {
		w.rec.Action, w.rec.Reason = ActionLeftAlone, reason
		return nil
	}
	if len(entries) == 0 {
		if workName.MatchString(name) {
			w.rec.Action = ActionDiscarded // a Write killed before it recorded its owner
			return nil
		}
		return leave("it is empty and not named as lvms-rebase names its work directories")
	}
	own, err := readOwner(w.work)
	if errors.Is(err, fs.ErrNotExist) {
		return leave("it has no owner record (" + ownerName + "): no lvms-rebase write made it")
	}
	if err != nil {
		return leave("its owner record is unreadable (" + err.Error() + ")")
	}
	if err := own.proves(w.root, w.work); err != nil {
		return leave(err.Error())
	}
	foreign, err := foreignEntries(w.work, stagingEntries)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return leave("it holds " + strings.Join(foreign, ", ") + ", which an lvms-rebase staging never has")
	}
	w.rec.Action = ActionDiscarded
	return nil
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
	w.rec.Action = ActionRolledBack
	if w.forward {
		w.rec.Action = ActionRolledForward
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
	b, err := readRecord(filepath.Join(work, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	j := &journal{}
	if err == nil {
		err = decodeStrict(b, j)
	}
	if err != nil {
		return nil, fmt.Errorf("interrupted write %s: unreadable journal; recovery touched nothing (backups are in %s/old): %w", work, work, err)
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

var (
	fingerprintRE = regexp.MustCompile(`^(sha256:[0-9a-f]{64}|symlink:.+)$`)
	modeRE        = regexp.MustCompile(`^0[0-7]{3}$`)
)

// validate checks the journal like any write's paths (see the comment at the top).
func (j *journal) validate(root, work string, scope Scope) error {
	if len(j.Files) == 0 {
		return errors.New("journal lists no files")
	}
	seen := map[string]bool{}
	for _, e := range j.Files {
		if err := j.validateEntry(e, seen, scope); err != nil {
			return err
		}
		for _, p := range []struct{ base, rel string }{{root, e.Path}, {work, "old/" + e.Path}, {work, "new/" + e.Path}} {
			if err := noSymlinkHop(p.base, p.rel); err != nil {
				return fmt.Errorf("journal entry %q: %w", e.Path, err)
			}
		}
	}
	for _, d := range j.Managed {
		if err := checkRel("journal managed directory", d); err != nil {
			return err
		}
		if !slices.Contains(scope.Dirs, d) {
			return fmt.Errorf("journal managed directory %q: not a directory lvms-rebase manages (%s)", d, strings.Join(scope.Dirs, ", "))
		}
	}
	for _, d := range j.Dirs {
		if err := j.validateDir(root, d); err != nil {
			return err
		}
	}
	return nil
}

func (j *journal) validateEntry(e entry, seen map[string]bool, scope Scope) error {
	if err := checkRel("journal entry", e.Path); err != nil {
		return err
	}
	if !scope.Contains(e.Path) {
		return fmt.Errorf("journal entry %q: not a path an lvms-rebase write produces (%s)", e.Path, scope)
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
	if (strings.HasPrefix(e.Old, "sha256:") != modeRE.MatchString(e.OldMode)) || (e.New != "") != modeRE.MatchString(e.NewMode) {
		return fmt.Errorf("journal entry %q: expected a mode (0644) with each file fingerprint, got old %q, new %q", e.Path, e.OldMode, e.NewMode)
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

// assess classifies one file by its current bytes and mode and checks its backup.
func assess(root, work string, e entry) (assessed, error) {
	a := assessed{entry: e, state: conflict}
	cur, curMode, err := fingerprint(livePath(root, e.Path))
	if err != nil {
		return a, err
	}
	if e.Old != "" {
		bak, bakMode, err := fingerprint(filepath.Join(work, "old", filepath.FromSlash(e.Path)))
		if err != nil {
			return a, err
		}
		a.backupOK = bak == e.Old && bakMode == e.OldMode
	}
	switch {
	case cur == e.New:
		a.state = atNew
		if curMode != e.NewMode {
			a.modeNow = curMode // the bytes it wrote, under a mode someone gave it since
		}
	case cur == e.Old:
		a.state = atOld // never touched, whatever its mode now
	case cur == "" && a.backupOK:
		a.state = movedOut
	}
	return a, nil
}

// conflictOf says whether the chosen direction leaves a file alone, and what to tell about it.
func (w *interrupted) conflictOf(a assessed) (Conflict, bool) {
	switch {
	case a.state == conflict:
		return w.changedConflict(a), true
	case w.forward || a.state != atNew:
		return Conflict{}, false // rolling forward touches no file; atOld and movedOut are verified
	case a.modeNow != "":
		return w.modeConflict(a), true
	case a.Old != "" && !a.backupOK:
		return w.lostBackupConflict(a), true
	}
	return Conflict{}, false
}

// The words of a conflict depend on what the interrupted write did to the file: added it (it
// did not exist before; version control knows nothing of it), changed it, or removed it.
func (w *interrupted) backup(a assessed) string {
	return filepath.Join(w.work, "old", filepath.FromSlash(a.Path))
}

func (w *interrupted) done() string { return "then remove " + w.work + " and run again" }

func vcsAdvice(p string) string {
	return "check it against version control (git diff -- " + p + "; git checkout -- " + p + " restores the committed content), "
}

// changedConflict is a file whose bytes are neither the journaled old nor new ones.
func (w *interrupted) changedConflict(a assessed) Conflict {
	const neither = "neither its content before that run nor the one it wrote"
	switch {
	case a.Old == "":
		return Conflict{a.Path, "did not exist before the interrupted write, which added it, and now holds other content than that write put there; left as it is",
			"keep it if it is yours, else delete it; " + w.done()}
	case a.New == "" && a.backupOK:
		return Conflict{a.Path, "the interrupted write was removing it, and it now holds other content than before that run; left as it is",
			"keep your version or copy back " + w.backup(a) + " (its content before that run), " + w.done()}
	case a.backupOK:
		return Conflict{a.Path, "changed since the interrupted write (" + neither + "); left as it is",
			"keep your version or copy back " + w.backup(a) + " (its content before that run), " + w.done()}
	}
	return Conflict{a.Path, "changed since the interrupted write (" + neither + ") and no intact backup; left as it is",
		vcsAdvice(a.Path) + w.done()}
}

// modeConflict is a file holding the bytes the interrupted write put there under another mode:
// rolling back would replace or delete it and lose the mode someone gave it since.
func (w *interrupted) modeConflict(a assessed) Conflict {
	problem := fmt.Sprintf("holds what the interrupted write put there, but its mode changed since (now %s, the write gave it %s); left as it is", a.modeNow, a.NewMode)
	if a.Old == "" {
		return Conflict{a.Path, "did not exist before the interrupted write and " + problem, "keep it or delete it; " + w.done()}
	}
	return Conflict{a.Path, problem, "keep it as it is, or copy back " + w.backup(a) + " (its content before that run) to undo the write; " + w.done()}
}

// lostBackupConflict is a file the interrupted write changed or removed whose backup is gone.
func (w *interrupted) lostBackupConflict(a assessed) Conflict {
	if a.New == "" {
		return Conflict{a.Path, "was removed by the interrupted write and its backup " + w.backup(a) + " is missing or altered; left absent",
			"restore it from version control (git checkout -- " + a.Path + "), " + w.done()}
	}
	return Conflict{a.Path, "holds what the interrupted write put there, but its backup " + w.backup(a) + " is missing or altered; left as it is",
		"restore it from version control (git checkout -- " + a.Path + ") if that content is wrong, " + w.done()}
}

// recover acts on the classification: discard a staging, roll back or forward, and keep the
// work directory (with an error) when anything was left alone or failed.
func (w *interrupted) recover() (Recovery, error) {
	rec := w.rec
	switch {
	case rec.Action == ActionLeftAlone:
		return rec, nil
	case w.j == nil:
		return rec, w.removeWork(&rec)
	case w.forward:
		pruneEmptyDirs(w.root, w.j.paths(func(e entry) bool { return e.New == "" }), w.j.Managed)
	default:
		if err := w.rollback(); err != nil {
			return rec, fmt.Errorf("rolling back the interrupted write %s (backups kept in %s/old): %w", w.work, w.work, err)
		}
	}
	if len(rec.Conflicts) > 0 {
		var lines []string
		for _, c := range rec.Conflicts {
			lines = append(lines, c.String())
		}
		return rec, fmt.Errorf("interrupted write %s: %w, left as they are (the rest was %s): %s", w.work, ErrRecoveryConflict, rec.Action, strings.Join(lines, "; "))
	}
	return rec, w.removeWork(&rec)
}

// removeWork removes the work directory once it is done with, and notes in rec what it left
// there that a write never puts in one.
func (w *interrupted) removeWork(rec *Recovery) error {
	foreign, err := removeWork(w.work)
	if len(foreign) > 0 {
		rec.Reason = fmt.Sprintf("%s kept: it also holds %s, which lvms-rebase did not put there", w.work, strings.Join(foreign, ", "))
	}
	return err
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
		case a.state == atNew && a.modeNow == "" && (a.Old == "" || a.backupOK):
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

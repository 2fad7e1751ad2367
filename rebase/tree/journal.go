package tree

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// The swap into the tree is journaled so that a kill at any instant can be repaired. Inside
// the work directory (".lvms-rebase-*" in the root):
//
//	new/<path>      the staged contents (complete before the journal is written)
//	journal.json    the intent: every path added, changed, removed, and the directories to create
//	old/<path>      the backups, moved aside one by one
//	committed       the marker written once every new file is in place
//
// Recover, run by the next lvms-rebase under the tree lock, reads that state: no journal
// means the tree was never touched (the staging is discarded); a journal without the marker
// is rolled back from the backups; with the marker the write is complete and only the
// backups are dropped (rolled forward). Each step is idempotent, so a kill during recovery is
// repaired by the next one.

const (
	workPrefix    = ".lvms-rebase-"
	journalName   = "journal.json"
	committedName = "committed"
)

// ErrLocked is wrapped by Lock when another process holds the tree.
var ErrLocked = errors.New("the tree is locked")

// journal is the intent of one swap, written before the first rename.
type journal struct {
	Add     []string `json:"add,omitempty"`
	Change  []string `json:"change,omitempty"`
	Remove  []string `json:"remove,omitempty"`
	Dirs    []string `json:"dirs,omitempty"` // directories the swap creates, parents first
	Managed []string `json:"managed,omitempty"`
}

// stepHook is called at each point of a write where a kill leaves a distinct state; tests
// use it to pause a helper process there and kill it.
var stepHook = func(step string) {}

// missingDirs lists the directories that placing adds creates, parents first.
func missingDirs(root string, adds []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, rel := range adds {
		var chain []string
		for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d))); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if !seen[chain[i]] {
				seen[chain[i]] = true
				out = append(out, chain[i])
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.Count(out[i], "/") < strings.Count(out[j], "/") })
	return out
}

// save writes the journal durably: the file and the work directory are synced, so that
// after a crash the journal is either absent or complete.
func (j *journal) save(work string) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := writeFileFn(filepath.Join(work, journalName), b, 0o644); err != nil {
		return fmt.Errorf("writing the write journal: %w", err)
	}
	return syncDir(work)
}

// markCommitted records that every new file is in place.
func markCommitted(work string) error {
	if err := writeFileFn(filepath.Join(work, committedName), nil, 0o644); err != nil {
		return fmt.Errorf("marking the write complete: %w", err)
	}
	return syncDir(work)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

// apply moves the old files aside and the new ones into place, in the journal's order.
func (j *journal) apply(root, work string) error {
	for _, rel := range append(append([]string(nil), j.Change...), j.Remove...) {
		live, bak := livePath(root, rel), filepath.Join(work, "old", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(bak), 0o755); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
		stepHook("backup " + rel)
		if err := renameFn(live, bak); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
	}
	for _, d := range j.Dirs {
		stepHook("mkdir " + d)
		if err := os.Mkdir(livePath(root, d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("writing %s: %w", d, err)
		}
	}
	for _, rel := range append(append([]string(nil), j.Add...), j.Change...) {
		stepHook("place " + rel)
		if err := renameFn(filepath.Join(work, "new", filepath.FromSlash(rel)), livePath(root, rel)); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
	}
	return nil
}

// rollback undoes whatever part of apply happened, from the state on disk alone: a new file
// whose staged copy is gone was placed and is removed; every backup goes back; created
// directories are removed when empty. It continues past errors and reports them all.
func (j *journal) rollback(root, work string) error {
	var errs []error
	for _, rel := range append(append([]string(nil), j.Add...), j.Change...) {
		if _, err := os.Lstat(filepath.Join(work, "new", filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) {
			if err := os.Remove(livePath(root, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s: %w", rel, err))
			}
		}
	}
	for _, rel := range append(append([]string(nil), j.Change...), j.Remove...) {
		bak := filepath.Join(work, "old", filepath.FromSlash(rel))
		if _, err := os.Lstat(bak); err != nil {
			continue // never moved aside
		}
		if err := renameFn(bak, livePath(root, rel)); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", rel, err))
		}
	}
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		if err := os.Remove(livePath(root, j.Dirs[i])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing created directory %s: %w", j.Dirs[i], err))
		}
	}
	return errors.Join(errs...)
}

func livePath(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

// Recovery says what Recover did with one interrupted write.
type Recovery struct {
	// Dir is the work directory, relative to the root.
	Dir string `json:"dir"`
	// Action is "rolled back", "rolled forward" or "discarded" (staging only, tree untouched).
	Action string `json:"action"`
	// Paths are the files the interrupted write covered.
	Paths []string `json:"paths,omitempty"`
}

func (r Recovery) String() string {
	switch r.Action {
	case "discarded":
		return fmt.Sprintf("an interrupted lvms-rebase left staged files in %s before touching the tree; discarded them", r.Dir)
	case "rolled back":
		return fmt.Sprintf("an interrupted lvms-rebase write (%s) was rolled back: %d files restored to their state before that run", r.Dir, len(r.Paths))
	}
	return fmt.Sprintf("an interrupted lvms-rebase write (%s) had placed every file; rolled it forward (backups dropped)", r.Dir)
}

// Recover repairs the tree after an interrupted Write (see the journal above) and says what
// it did. Call it only while holding Lock: a concurrent Write's work directory looks just
// like an interrupted one.
func Recover(root string) ([]Recovery, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("looking for interrupted writes in %s: %w", root, err)
	}
	var out []Recovery
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), workPrefix) {
			continue
		}
		rec, err := recoverOne(root, e.Name())
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	return out, nil
}

func recoverOne(root, name string) (Recovery, error) {
	work := filepath.Join(root, name)
	rec := Recovery{Dir: name}
	b, err := os.ReadFile(filepath.Join(work, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		rec.Action = "discarded"
		return rec, removeWork(work)
	}
	var j journal
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil {
		return rec, fmt.Errorf("interrupted write %s: unreadable journal (backups are in %s/old): %w", work, work, err)
	}
	rec.Paths = append(append(append([]string(nil), j.Add...), j.Change...), j.Remove...)
	sort.Strings(rec.Paths)
	if _, err := os.Stat(filepath.Join(work, committedName)); err == nil {
		rec.Action = "rolled forward"
		pruneEmptyDirs(root, j.Remove, j.Managed)
		return rec, removeWork(work)
	}
	rec.Action = "rolled back"
	if err := j.rollback(root, work); err != nil {
		return rec, fmt.Errorf("rolling back the interrupted write %s (backups kept in %s/old): %w", work, work, err)
	}
	return rec, removeWork(work)
}

func removeWork(work string) error {
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("removing %s: %w", work, err)
	}
	return nil
}

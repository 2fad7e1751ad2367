package tree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// The swap into the tree is journaled so that a kill at any instant can be repaired. Inside
// the work directory (".lvms-rebase-*" in the root):
//
//	owner.json      who made the directory: the tree's and the directory's identity (owner.go)
//	new/<path>      the staged contents (complete before the journal is written)
//	journal.json    the intent: the owner again, every path with a fingerprint and mode of
//	                what it held before and of what the swap puts there, and the directories
//	                the swap creates
//	old/<path>      the backups, moved aside one by one
//	committed       the marker written (and synced) once every new file is in place
//
// Recover (recover.go), run by the next lvms-rebase under the tree lock, trusts none of it
// blindly: the directory must prove it is this tree's, the journal's paths are validated
// like any write and must be paths a write produces (Scope), and a file is touched only when
// its bytes and mode are the journaled before or after ones.

const (
	workPrefix    = ".lvms-rebase-"
	journalName   = "journal.json"
	committedName = "committed"
	// journalVersion 3 records the owner and the modes; version 2 (fingerprints without
	// modes or owner) cannot prove whose it is.
	journalVersion = 3
)

// ErrLocked is wrapped by Lock when another process holds the tree.
var ErrLocked = errors.New("the tree is locked")

// journal is the intent of one swap, written before the first rename.
type journal struct {
	Version int      `json:"version"`
	Owner   owner    `json:"owner"`
	Files   []entry  `json:"files"`
	Dirs    []string `json:"dirs,omitempty"` // directories the swap creates, parents first
	Managed []string `json:"managed,omitempty"`
}

// entry is one file of a swap. Old and New are fingerprints (see fingerprint): what the path
// held before the swap ("" when it did not exist: an add) and what the swap puts there (""
// when it removes the file); OldMode and NewMode are the permission bits of those regular
// files ("0644").
type entry struct {
	Path    string `json:"path"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
	OldMode string `json:"oldMode,omitempty"`
	NewMode string `json:"newMode,omitempty"`
}

// stepHook is called at each point of a write where a kill leaves a distinct state; tests
// use it to pause a process there and kill or signal it. ctx is the write's context.
var stepHook = func(ctx context.Context, step string) {}

// newJournal records the changes p with the fingerprints and modes of the current and the
// new contents (modes: what each placed file gets).
func newJournal(root string, own owner, p *Changes, files map[string][]byte, modes map[string]fs.FileMode, managedDirs []string) (*journal, error) {
	j := &journal{Version: journalVersion, Owner: own, Dirs: missingDirs(root, p.Add), Managed: managedDirs}
	for _, rel := range p.Add {
		j.Files = append(j.Files, entry{Path: rel, New: contentFingerprint(files[rel]), NewMode: modeString(modes[rel])})
	}
	for _, rel := range append(append([]string(nil), p.Change...), p.Remove...) {
		old, oldMode, err := fingerprint(livePath(root, rel))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", rel, err)
		}
		e := entry{Path: rel, Old: old, OldMode: oldMode}
		if data, ok := files[rel]; ok {
			e.New, e.NewMode = contentFingerprint(data), modeString(modes[rel])
		}
		j.Files = append(j.Files, e)
	}
	sort.Slice(j.Files, func(a, b int) bool { return j.Files[a].Path < j.Files[b].Path })
	return j, nil
}

// contentFingerprint is the fingerprint of a regular file holding data.
func contentFingerprint(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }

// fingerprint says what is at full without following a symlink: "" when nothing is,
// "sha256:<hex>" and the permission bits for a regular file, "symlink:<target>" for a
// symlink, "other:<type>" for anything else (which never matches a journaled state).
func fingerprint(full string) (fp, mode string, err error) {
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", nil
	case err != nil:
		return "", "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		return "symlink:" + target, "", err
	case !fi.Mode().IsRegular():
		return "other:" + fi.Mode().Type().String(), "", nil
	}
	f, _, err := safefile.Open(full, safefile.Options{Max: safefile.NoSizeCap}) // hashed as read
	if err != nil {
		return "other:replaced while reading", "", nil
	}
	defer f.Close()
	// The file opened must be the one inspected: a path swapped for a symlink or a FIFO in
	// between is not read through (and, opened non-blocking, does not hang).
	if fo, err := f.Stat(); err != nil || !os.SameFile(fi, fo) {
		return "other:replaced while reading", "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), modeString(fi.Mode()), nil
}

// backups are the paths the swap moves aside (changed and removed), places the ones it puts.
func (j *journal) backups() []string { return j.paths(func(e entry) bool { return e.Old != "" }) }
func (j *journal) places() []string  { return j.paths(func(e entry) bool { return e.New != "" }) }

func (j *journal) paths(keep func(entry) bool) []string {
	var out []string
	for _, e := range j.Files {
		if keep(e) {
			out = append(out, e.Path)
		}
	}
	return out
}

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

// save writes the journal durably (applier/atomicfile: synced, renamed into place, the work
// directory synced), so that after a crash it is either absent or complete.
func (j *journal) save(work string) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := writeFileFn(filepath.Join(work, journalName), b, 0o644); err != nil {
		return fmt.Errorf("writing the write journal: %w", err)
	}
	return nil
}

// markCommitted records that every new file is in place. The renames are made durable first
// (their directories synced), then the marker file and the work directory: once it returns
// nil, a crash cannot leave a marker that claims more than the disk holds. When it fails,
// the marker is removed again, so that the rollback that follows is not mistaken for a
// complete write (and Recover checks the files against the marker anyway).
func (j *journal) markCommitted(root, work string) error {
	err := syncParents(root, j.Files)
	if err == nil {
		err = writeFileFn(filepath.Join(work, committedName), nil, 0o644)
	}
	if err != nil {
		_ = os.Remove(filepath.Join(work, committedName))
		_ = syncDir(work)
		return fmt.Errorf("marking the write complete: %w", err)
	}
	return nil
}

// syncParents syncs every directory the swap renamed files into or out of, together.
func syncParents(root string, files []entry) error {
	seen := map[string]bool{}
	var dirs []string
	for _, e := range files {
		if d := path.Dir(e.Path); !seen[d] {
			seen[d] = true
			dirs = append(dirs, livePath(root, d))
		}
	}
	_, err := syncEach(dirs, syncDir)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir) // safefile: a directory this write created or renamed into, to sync it
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syncFn(d); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// apply moves the old files aside and the new ones into place, in the journal's order.
func (j *journal) apply(root, work string, step func(string)) error {
	for _, rel := range j.backups() {
		live, bak := livePath(root, rel), filepath.Join(work, "old", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(bak), 0o755); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
		step("backup " + rel)
		if err := renameFn(live, bak); err != nil {
			return fmt.Errorf("backing up %s: %w", rel, err)
		}
	}
	for _, d := range j.Dirs {
		step("mkdir " + d)
		if err := os.Mkdir(livePath(root, d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("writing %s: %w", d, err)
		}
	}
	for _, rel := range j.places() {
		step("place " + rel)
		if err := renameFn(filepath.Join(work, "new", filepath.FromSlash(rel)), livePath(root, rel)); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
	}
	return nil
}

func livePath(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

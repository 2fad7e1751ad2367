package tree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// A directory in the root named like a work directory is ours only when it proves it: a
// person's ".lvms-rebase-notes/", a --cache-dir kept in the checkout as ".lvms-rebase-cache"
// or a work directory copied along with another checkout are left alone and named. The proof
// is an owner record naming the identity (inode) of the tree's root and of the work directory
// itself: a Write records it in owner.json as soon as it has made the directory (unsynced: a
// crash that loses it leaves the staging named, not deleted) and again in the journal (synced
// with it). A person's directory has no record; a copy, or a record copied into another
// directory, names other inodes.

const (
	ownerName = "owner.json"
	toolName  = "lvms-rebase"
	// maxRecordSize caps what is read of a journal or owner record (a journal of a few
	// hundred files is tens of KB).
	maxRecordSize = 16 << 20
)

// workName is what os.MkdirTemp(root, workPrefix) names a work directory. An empty directory
// of exactly that name is a Write killed before it could record its owner; removing it loses
// nothing.
var workName = regexp.MustCompile(`^` + regexp.QuoteMeta(workPrefix) + `[0-9]+$`)

// owner identifies the tree and the work directory a Write made.
type owner struct {
	Tool string `json:"tool"`
	Root uint64 `json:"root"` // inode of the tree's root directory
	Dir  uint64 `json:"dir"`  // inode of the work directory
}

// ownerOf is the identity of the work directory work in the tree at root.
func ownerOf(root, work string) (owner, error) {
	rfi, err := os.Stat(root)
	if err != nil {
		return owner{}, err
	}
	wfi, err := os.Lstat(work)
	if err != nil {
		return owner{}, err
	}
	r, ok1 := inodeOf(rfi)
	w, ok2 := inodeOf(wfi)
	if !ok1 || !ok2 {
		return owner{}, errors.New("this platform has no inode numbers to prove a work directory's owner by")
	}
	return owner{Tool: toolName, Root: r, Dir: w}, nil
}

// claim records the owner of a work directory just made.
func claim(root, work string) (owner, error) {
	o, err := ownerOf(root, work)
	if err != nil {
		return o, fmt.Errorf("recording the owner of %s: %w", work, err)
	}
	b, _ := json.Marshal(o)
	if _, err := (atomicfile.Options{NoSync: true}).WriteFile(filepath.Join(work, ownerName), b, 0o644); err != nil {
		return o, fmt.Errorf("recording the owner of %s: %w", work, err)
	}
	return o, nil
}

// proves says why o does not prove that work, in the tree at root, is a work directory a
// Write made there (nil when it does).
func (o owner) proves(root, work string) error {
	want, err := ownerOf(root, work)
	switch {
	case err != nil:
		return err
	case o.Tool != toolName:
		return fmt.Errorf("its owner record names tool %q", o.Tool)
	case o.Root != want.Root:
		return errors.New("its owner record names another tree (copied from another checkout?)")
	case o.Dir != want.Dir:
		return errors.New("its owner record names another directory (copied, or a record copied into it)")
	}
	return nil
}

// readOwner reads a work directory's owner record.
func readOwner(work string) (owner, error) {
	var o owner
	b, err := readRecord(filepath.Join(work, ownerName))
	if err == nil {
		err = decodeStrict(b, &o)
	}
	return o, err
}

// readRecord reads one of the write's own records: a regular file (not through a symlink,
// not a FIFO) of at most maxRecordSize bytes.
func readRecord(p string) ([]byte, error) {
	return safefile.ReadFile(p, safefile.Options{Max: maxRecordSize})
}

// decodeStrict decodes one JSON value with no unknown fields and nothing after it.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the record")
	}
	return nil
}

// A work directory holds these entries only (besides the temporary files of the atomic
// writes of its records); recovery removes exactly these, the owner record last so that a
// kill during the removal leaves a directory the next run still proves its own.
var (
	stagingEntries = []string{"new", ownerName}
	removeOrder    = []string{"new", "old", committedName, journalName, ownerName}
)

// isRecordTemp reports whether name is a temporary file of an atomic write of a record.
func isRecordTemp(name string) bool {
	for _, r := range []string{journalName, ownerName, committedName} {
		if strings.HasPrefix(name, "."+r+".tmp-") {
			return true
		}
	}
	return false
}

// foreignEntries lists the entries of work that a work directory never has (allowed: the
// names given and the records' temporary files).
func foreignEntries(work string, allowed []string) ([]string, error) {
	entries, err := os.ReadDir(work)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !slices.Contains(allowed, e.Name()) && !isRecordTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// removeWork removes what a Write put in its work directory, and the directory when nothing
// else is left; it returns the entries it left (a person's, put there since).
func removeWork(work string) ([]string, error) {
	foreign, err := foreignEntries(work, removeOrder)
	if err != nil {
		return nil, fmt.Errorf("removing %s: %w", work, err)
	}
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		if isRecordTemp(e.Name()) {
			if err := os.Remove(filepath.Join(work, e.Name())); err != nil {
				return nil, fmt.Errorf("removing %s: %w", work, err)
			}
		}
	}
	for _, name := range removeOrder {
		if err := os.RemoveAll(filepath.Join(work, name)); err != nil {
			return nil, fmt.Errorf("removing %s: %w", work, err)
		}
	}
	if len(foreign) > 0 {
		return foreign, nil
	}
	if err := os.Remove(work); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing %s: %w", work, err)
	}
	return nil, nil
}

// Package dirtree reads a directory tree into memory for tests that compare trees: what an
// extraction or a rebase wrote against what it should have, or (Snapshot) every path of a
// tree with its type, mode and content hash, to see what a process changed. Test support
// only; it does not import testing, so any test package (or hack tool) can use it.
package dirtree

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Read returns the content of every file under root by its slash-separated path relative to
// root.
func Read(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	return out, err
}

// Entry is what Snapshot records of one path: its type and permission bits, a symbolic
// link's target, a regular file's size and content hash. Nothing but a regular file is
// opened, so a FIFO, a device or a link to /dev/zero in the tree is recorded, never read.
type Entry struct {
	Mode fs.FileMode
	Link string
	Size int64
	Sum  [sha256.Size]byte
}

func (e Entry) String() string {
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		return "symlink to " + e.Link
	case e.Mode.IsRegular():
		return fmt.Sprintf("%v %d bytes sha256:%x", e.Mode, e.Size, e.Sum[:6])
	}
	return e.Mode.String()
}

// Snapshot records every path under root (directories included, links not followed) by its
// slash-separated path relative to root, for tests that check what a process changed
// anywhere in a tree, .git included.
func Snapshot(root string) (map[string]Entry, error) {
	out := map[string]Entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			e.Link, err = os.Readlink(p)
		case info.Mode().IsRegular():
			e.Size = info.Size()
			e.Sum, err = hashFile(p)
		}
		out[filepath.ToSlash(rel)] = e
		return err
	})
	return out, err
}

func hashFile(p string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

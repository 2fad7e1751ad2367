// Package dirtree reads a directory tree into memory for tests that compare trees: what an
// extraction or a rebase wrote against what it should have. Test support only; it does not
// import testing, so any test package (or hack tool) can use it.
package dirtree

import (
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

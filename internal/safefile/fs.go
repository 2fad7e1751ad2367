package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// FS returns the tree at root as an fs.FS under ReadIn's policy, in place of os.DirFS for a
// tree lvms-rebase reads: a file opened or read through it is a regular file within
// DefaultMaxSize reached through no symbolic link; directories can be listed and walked.
func FS(root string) fs.FS { return dirFS(root) }

type dirFS string

var (
	_ fs.ReadFileFS = dirFS("")
	_ fs.StatFS     = dirFS("")
	_ fs.ReadDirFS  = dirFS("")
)

// Open opens a regular file under the policy, or a directory (for fs.WalkDir/ReadDir).
func (d dirFS) Open(name string) (fs.File, error) {
	if name == "." {
		return openDir(string(d))
	}
	fi, err := d.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return openDir(filepath.Join(string(d), filepath.FromSlash(name)))
	}
	f, _, err := OpenIn(string(d), name, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ReadFile reads a file as ReadIn does.
func (d dirFS) ReadFile(name string) ([]byte, error) { return ReadIn(string(d), name, 0) }

// ReadFileMax reads a file as ReadIn does, within max bytes.
func (d dirFS) ReadFileMax(name string, max int64) ([]byte, error) {
	return ReadIn(string(d), name, max)
}

// MaxReader is a file system that applies this package's policy itself (FS,
// internal/gittree): ReadFS leaves the read to it.
type MaxReader interface {
	ReadFileMax(name string, max int64) ([]byte, error)
}

// Stat describes name without following a link (a link is reported as one, never as what
// it names); its directories must not be links either.
func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	if name == "." {
		return os.Stat(string(d))
	}
	p, err := inTree(string(d), name)
	if err != nil {
		return nil, err
	}
	return os.Lstat(p)
}

// ReadDir lists a directory of the tree.
func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == "." {
		return os.ReadDir(string(d))
	}
	p, err := inTree(string(d), name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: &Error{Path: p, Mode: fi.Mode().Type()}}
	}
	return os.ReadDir(p)
}

// OpenDir opens the directory name (links followed: a person named it) without blocking: a
// FIFO or another non-directory is an error at once.
func OpenDir(name string) (*os.File, error) { return openDirFollow(name) }

// ReadFS reads name from fsys whole, within max bytes (0: DefaultMaxSize), as a regular
// file: fsys's own policy when it has one (FS, internal/gittree), else its Stat is checked
// before the file is opened and the read stops past the cap.
func ReadFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxSize
	}
	if m, ok := fsys.(MaxReader); ok {
		return m.ReadFileMax(name, max)
	}
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := check(name, fi, max); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(name, f, fi.Size(), max)
}

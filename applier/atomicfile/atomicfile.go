// Package atomicfile writes files that readers never see half-written, and that a crash
// leaves either as they were or complete: the content goes to a temporary sibling
// (".<name>.tmp-*"), is synced, and is renamed over the target, whose directory is then
// synced so that the rename itself survives the crash. It is the one atomic writer of both
// modules: the applier's runtime lvmd copy (vg-manager hot-reloads it), and lvms-rebase's PR
// bodies, cache entries and tree journals.
//
// A symlink at the target is replaced, never written through. Nothing is read through one
// either: WriteFile compares with the old content only when the target is a regular file of
// the same size.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Options adjust a write. The zero value is the durable write.
type Options struct {
	// NoSync skips the fsyncs of the file and its directory, for content that is verified
	// whenever it is read (a content-addressed cache) or only a hint: a crash may then leave
	// the target as it was, missing or truncated, but a running reader still never sees a
	// partial file.
	NoSync bool
}

// WriteFile writes data to path with mode (exactly: the umask does not apply) and creates
// missing parent directories (0755). A regular file that already holds exactly data with
// the same permission bits is left alone: changed is false and its mtime stays.
func WriteFile(path string, data []byte, mode fs.FileMode) (changed bool, err error) {
	return Options{}.WriteFile(path, data, mode)
}

// WriteFile is the package's WriteFile with these options.
func (o Options) WriteFile(path string, data []byte, mode fs.FileMode) (changed bool, err error) {
	if same(path, data, mode) {
		return false, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("creating %s: %w", dir, err)
	}
	f, err := o.Create(path, mode)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Discard() }() // after Commit, a no-op
	if _, err := f.Write(data); err != nil {
		return false, err
	}
	if err := f.Commit(); err != nil {
		return false, err
	}
	return true, nil
}

// same reports whether path is a regular file holding exactly data with mode's permission
// bits. It reads only a regular file of len(data) bytes, so a symlink to a device or a
// huge file costs nothing.
func same(path string, data []byte, mode fs.FileMode) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) || fi.Mode().Perm() != mode.Perm() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fo, err := f.Stat(); err != nil || !os.SameFile(fi, fo) {
		return false
	}
	old, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(old, data)
}

// File is a file being written atomically: it appears at its path, complete, on Commit;
// Discard (or a crash) before that leaves the path as it was.
type File struct {
	tmp  *os.File
	path string
	mode fs.FileMode
	opts Options
	done bool
}

// Create starts an atomic write of path with mode. The directory must exist. Call Discard
// when the write is abandoned (deferring it is fine: after Commit it does nothing).
func Create(path string, mode fs.FileMode) (*File, error) { return Options{}.Create(path, mode) }

// Create is the package's Create with these options.
func (o Options) Create(path string, mode fs.FileMode) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{tmp: tmp, path: path, mode: mode, opts: o}, nil
}

// Write appends p to the pending content.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.tmp.Write(p)
	if err != nil {
		err = fmt.Errorf("writing %s: %w", f.tmp.Name(), err)
	}
	return n, err
}

// Name is the temporary file's path (for messages; the content is not at f's path yet).
func (f *File) Name() string { return f.tmp.Name() }

// Commit sets the mode, syncs, closes and renames the content onto the path, then syncs
// the directory. On error the temporary file is removed and the path is as it was.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: " + f.path + " already committed or discarded")
	}
	err := f.tmp.Chmod(f.mode)
	if err == nil && !f.opts.NoSync {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		f.done = true
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	f.done = true
	if f.opts.NoSync {
		return nil
	}
	if err := SyncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("writing %s: syncing its directory: %w", f.path, err)
	}
	return nil
}

// Discard abandons the write and removes the temporary file; after Commit it does nothing.
func (f *File) Discard() error {
	if f.done {
		return nil
	}
	f.done = true
	f.tmp.Close()
	return os.Remove(f.tmp.Name())
}

// SyncDir makes the entries of dir (files created, renamed or removed in it) durable. File
// systems that cannot sync a directory (EINVAL) are taken to need no such sync.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

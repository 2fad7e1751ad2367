// Package readfile is the applier's one way to read a file it is given: MicroShift's config.yaml
// and drop-ins, lvmd.yaml, and the assets tree. Only a regular file (or a symlink to one) is
// read, and at most a cap of bytes: a FIFO would block the start-up forever, a symlink to
// /dev/zero would fill memory, and a directory or device is never a configuration. Errors name
// the file and what it is instead; a missing file's error matches fs.ErrNotExist.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Host reads the file at path on the host, at most max bytes. It opens without blocking (a FIFO
// swapped in after the check still cannot hang the open) and checks the opened file itself.
func Host(path string, max int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if err := regular(path, st, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, st, max); err != nil {
		return nil, err
	}
	return readCapped(path, f, max)
}

// FS reads name from fsys, at most max bytes, refusing anything but a regular file (fs.Stat
// follows symlinks where fsys does, as os.DirFS).
func FS(fsys fs.FS, name string, max int64) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := regular(name, st, max); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(name, f, max)
}

// Error is a file that is not a regular file (Special), or larger than its cap.
type Error struct {
	Path string
	// Reason says what the file is instead: "a named pipe (FIFO), not a regular file", "has …
	// bytes, more than the … allowed".
	Reason  string
	Special bool
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// ErrSpecial matches (errors.Is) an *Error about a file that is not a regular file.
var ErrSpecial = errors.New("not a regular file")

// Is makes errors.Is(err, ErrSpecial) true for a special file.
func (e *Error) Is(target error) bool { return target == ErrSpecial && e.Special }

func regular(path string, st fs.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		return &Error{Path: path, Reason: Describe(st.Mode()) + ", not a regular file", Special: true}
	}
	if st.Size() > max {
		return &Error{Path: path, Reason: fmt.Sprintf("has %d bytes, more than the %d allowed", st.Size(), max)}
	}
	return nil
}

// readCapped reads r to the end, failing once it yields more than max bytes (a file that grew
// after the size check).
func readCapped(path string, r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, &Error{Path: path, Reason: fmt.Sprintf("has more than the %d bytes allowed", max)}
	}
	return data, nil
}

// Describe names a file mode's type for people: "a directory", "a named pipe (FIFO)", …
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

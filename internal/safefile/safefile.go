// Package safefile is the one way lvms-rebase reads a file it did not write itself: a
// MicroShift tree's records, recipes, lock, release JSONs and assets, a worktree of a clone,
// the auth file, IDMS/ICSP files, the --snapshot-assets directory or tarball, lvmd files, an
// OCI layout, the cache. Only a regular file is read (a FIFO, device, socket or directory is
// refused by its type, and a FIFO is opened without blocking, so it never hangs a run), and
// no more than a cap is read (a symlink to /dev/zero never fills memory): the error names
// the file, its size and the cap.
//
// Symbolic links follow one policy with internal/gittree, which reads the same files from a
// clone: a file of a tree (ReadIn, FS) is refused when any component of its path inside the
// tree is a link, since a checkout never links its records or assets and the rebase never
// follows links. A file a person named on the command line or in the environment (--authfile,
// --idms, lvmd check FILE, --snapshot-assets) may be reached through links, as mounted
// secrets and configuration are, but what it names must still be a regular file under the cap.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxSize caps a file read whole into memory: the tree's and a clone's files (the
// largest MicroShift asset is some hundred KB), records, locks, auth and IDMS files.
// internal/gittree caps a file read from a clone at the same size.
const DefaultMaxSize int64 = 16 << 20

// NoSizeCap is Options.Max for a file that is streamed, never held in memory, and bounded
// by its reader (a cached blob hashed as it is read): only the type is checked, and a regular
// file has an end.
const NoSizeCap int64 = math.MaxInt64

// ErrNotRegular and ErrTooLarge classify an *Error (errors.Is).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("over the size cap")
)

// Error is a file the policy refuses: not a regular file (Mode says what it is), or larger
// than the cap (Size, or -1 when the file grew past the cap while it was read).
type Error struct {
	Path string
	// Mode is the type of a file that is not a regular one (a symlink, a named pipe, a
	// device, a socket, a directory); zero for a file over the cap.
	Mode fs.FileMode
	// Size and Max are the file's size and the cap, for a file over the cap.
	Size, Max int64
	// What, when set, says what the file is in place of Mode's name (a git tree entry's
	// "submodule, git mode 160000").
	What string
}

func (e *Error) Error() string {
	if e.Max > 0 {
		if e.Size < 0 {
			return fmt.Sprintf("%s: more than the %d-byte cap of one file (it grew while read)", e.Path, e.Max)
		}
		return fmt.Sprintf("%s: %d bytes, over the %d-byte cap of one file", e.Path, e.Size, e.Max)
	}
	what := e.What
	if what == "" {
		what = Kind(e.Mode)
	}
	return fmt.Sprintf("%s: not a regular file (%s): refusing to read it", e.Path, what)
}

// Is makes errors.Is(err, ErrNotRegular) and errors.Is(err, ErrTooLarge) hold.
func (e *Error) Is(target error) bool {
	if e.Max > 0 {
		return target == ErrTooLarge
	}
	return target == ErrNotRegular
}

// Kind names a file type as the refusal prints it.
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeIrregular != 0:
		return "an irregular file"
	case t == 0:
		return "a regular file"
	}
	return "a special file, mode " + m.String()
}

// Options say how one file is opened.
type Options struct {
	// Max caps the file's size in bytes; 0 means DefaultMaxSize.
	Max int64
	// Follow lets the last component of the name be a symbolic link (to a regular file):
	// for files a person named, never for a tree's files.
	Follow bool
}

func (o Options) max() int64 {
	if o.Max <= 0 {
		return DefaultMaxSize
	}
	return o.Max
}

// Open opens name for reading under o: the type is checked before the open (no device is
// ever opened) and again on the open file (no swap in between), the open never blocks, and a
// file over the cap is refused. The caller reads it (the size is fixed only as far as the
// file is not written meanwhile: use ReadFile, or bound the reads, where that matters).
func Open(name string, o Options) (*os.File, fs.FileInfo, error) {
	stat := os.Lstat
	if o.Follow {
		stat = os.Stat
	}
	fi, err := stat(name)
	if err != nil {
		// Said as the open it stands for ("open F: no such file or directory"), as os.Open
		// and os.ReadFile say it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "open", Path: pe.Path, Err: pe.Err}
		}
		return nil, nil, err
	}
	if err := check(name, fi, o.max()); err != nil {
		return nil, nil, err
	}
	f, err := openNonBlocking(name, o.Follow)
	if err != nil {
		if isLoop(err) {
			return nil, nil, &Error{Path: name, Mode: fs.ModeSymlink}
		}
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = check(name, fi, o.max())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// check applies the policy to one file's information.
func check(name string, fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &Error{Path: name, Mode: fi.Mode().Type()}
	}
	if fi.Size() > max {
		return &Error{Path: name, Size: fi.Size(), Max: max}
	}
	return nil
}

// ReadFile reads name whole under o.
func ReadFile(name string, o Options) ([]byte, error) {
	f, fi, err := Open(name, o)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(name, f, fi.Size(), o.max())
}

// readAll reads r to its end, failing once it passes max bytes (a file that grew).
func readAll(name string, r io.Reader, size, max int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, max)+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, &Error{Path: name, Size: -1, Max: max}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// ReadIn reads the file rel (slash-separated) of the tree at root: no component of rel may be
// a symbolic link, and the file must be a regular one within max bytes (0: DefaultMaxSize).
// The name in errors is root joined with rel.
func ReadIn(root, rel string, max int64) ([]byte, error) {
	name, err := inTree(root, rel)
	if err != nil {
		return nil, err
	}
	return ReadFile(name, Options{Max: max})
}

// OpenIn opens the file rel of the tree at root as ReadIn reads it.
func OpenIn(root, rel string, max int64) (*os.File, fs.FileInfo, error) {
	name, err := inTree(root, rel)
	if err != nil {
		return nil, nil, err
	}
	return Open(name, Options{Max: max})
}

// inTree joins root and rel after checking that rel stays inside root and that none of its
// directories is a symbolic link (the last component is checked by Open).
func inTree(root, rel string) (string, error) {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	if !fs.ValidPath(clean) || clean == "." {
		return "", &fs.PathError{Op: "read", Path: filepath.Join(root, filepath.FromSlash(rel)), Err: fs.ErrInvalid}
	}
	dirs := strings.Split(clean, "/")
	p := root
	for _, d := range dirs[:len(dirs)-1] {
		p = filepath.Join(p, d)
		fi, err := os.Lstat(p)
		if err != nil {
			// Named as the file asked for: "open <root>/a/b/c: no such file or directory".
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = &fs.PathError{Op: "open", Path: filepath.Join(root, filepath.FromSlash(clean)), Err: pe.Err}
			}
			return "", err
		}
		if !fi.IsDir() {
			if fi.Mode()&fs.ModeSymlink != 0 {
				return "", &Error{Path: p, Mode: fs.ModeSymlink}
			}
			return "", &fs.PathError{Op: "read", Path: filepath.Join(root, filepath.FromSlash(clean)), Err: fmt.Errorf("%s is %s", p, Kind(fi.Mode()))}
		}
	}
	return filepath.Join(root, filepath.FromSlash(clean)), nil
}

//go:build unix

package safefile

import (
	"errors"
	"os"
	"syscall"
)

// openNonBlocking opens name read-only with O_NONBLOCK, so that a FIFO swapped in after the
// type check cannot block the open, and with O_NOFOLLOW unless links are followed, so that a
// symlink swapped in is refused by the kernel (ELOOP).
func openNonBlocking(name string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	return os.OpenFile(name, flags, 0)
}

// isLoop reports the error of O_NOFOLLOW on a symbolic link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// openDir opens a directory without following a link and without blocking.
func openDir(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openDirFollow opens a directory, following links, without blocking.
func openDirFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

//go:build unix

package tree

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// Lock takes an exclusive lock on the tree at root for the whole run, so that a second
// lvms-rebase on the same checkout fails at once instead of tripping over the first (or
// repairing a write that is still in progress). The lock is flock(2) on the root directory
// itself: no lock file is created, so none can end up committed or be left behind by a
// kill, and the kernel drops the lock with the process.
func Lock(root string) (unlock func(), err error) {
	f, err := safefile.OpenDir(root) // a FIFO given as the tree is refused, never waited on
	if err != nil {
		return nil, fmt.Errorf("locking the tree %s: %w", root, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another lvms-rebase holds %s: %w", root, ErrLocked)
		}
		return nil, fmt.Errorf("locking the tree %s: %w", root, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

//go:build unix

package fleet

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// lockDir takes an exclusive flock(2) on dir without waiting; the kernel drops it with the
// process, so a killed run's worktree is unlocked and a live run's is not.
func lockDir(dir string) (unlock func(), err error) {
	f, err := safefile.OpenDir(dir) // a directory: a FIFO put in its place fails at once
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

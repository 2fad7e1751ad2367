//go:build unix

package tree

import (
	"io/fs"
	"syscall"
)

// inodeOf is the inode number of fi, the identity an owner record keeps: it survives a
// reboot (device numbers may not) and a copy of the directory does not have it.
func inodeOf(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true //nolint:unconvert // uint32 on some platforms
}

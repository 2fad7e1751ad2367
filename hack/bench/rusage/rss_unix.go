//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSKiB is the child's ru_maxrss in KiB. wait4 folds in the maxima of the child's
// own waited-for children, so kubectl under the stock pipeline is included.
func peakRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	v := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" { // Darwin reports bytes, the others KiB
		v /= 1024
	}
	return v
}

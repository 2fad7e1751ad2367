//go:build !unix

package main

import "os"

// peakRSSKiB is unknown where rusage is not available.
func peakRSSKiB(*os.ProcessState) int64 { return 0 }

//go:build !unix

package tree

import "io/fs"

// inodeOf reports no identity where inodes are not available: an owner record cannot be
// proven there, so recovery leaves every work directory alone.
func inodeOf(fs.FileInfo) (uint64, bool) { return 0, false }

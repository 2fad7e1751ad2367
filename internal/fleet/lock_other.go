//go:build !unix

package fleet

import "errors"

// lockDir cannot lock here: a worktree is then never proven stale (removeStale leaves it).
func lockDir(string) (func(), error) { return func() {}, errors.ErrUnsupported }

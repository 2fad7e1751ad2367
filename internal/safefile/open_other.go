//go:build !unix

package safefile

import "os"

// openNonBlocking opens name read-only; without O_NONBLOCK and O_NOFOLLOW the type checks
// before and after the open are the policy.
func openNonBlocking(name string, _ bool) (*os.File, error) { return os.Open(name) }

func isLoop(error) bool { return false }

func openDir(name string) (*os.File, error) { return os.Open(name) }

func openDirFollow(name string) (*os.File, error) { return os.Open(name) }

//go:build !unix

package tree

// Lock is a no-op where flock(2) is not available; lvms-rebase runs on Linux and macOS.
func Lock(root string) (unlock func(), err error) { return func() {}, nil }

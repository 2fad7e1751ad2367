// Package gitcommit checks git commit ids taken from untrusted inputs (payload build
// annotations) before they are put into URLs and lock files.
package gitcommit

// Valid reports whether s looks like a git commit id: 7 to 64 hex digits (abbreviated ids,
// SHA-1 and SHA-256 object names).
func Valid(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

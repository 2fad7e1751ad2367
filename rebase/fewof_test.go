package rebase

import (
	"strings"
	"testing"
)

// TestFewOf: a warning names at most warnedPaths paths and counts the others.
func TestFewOf(t *testing.T) {
	paths := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "a"},
		{5, "a, b, c, d, e"},
		{6, "a, b, c, d, e and 1 more (-o json lists them: uncommitted)"},
		{7, "a, b, c, d, e and 2 more (-o json lists them: uncommitted)"},
	} {
		if got := fewOf(paths[:tc.n]); got != tc.want {
			t.Errorf("fewOf(%d paths) = %q, want %q", tc.n, got, tc.want)
		}
		if strings.Contains(fewOf(paths[:tc.n]), "f,") {
			t.Errorf("fewOf(%d paths) names a sixth path", tc.n)
		}
	}
}

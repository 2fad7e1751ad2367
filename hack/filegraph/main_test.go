package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestFilesReadTopDown: package rebase has no cycle of uses between its files; a package
// whose two files use each other is found, with the names each uses; a package whose files
// use each other only one way (a type, its method and field) is not.
func TestFilesReadTopDown(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks packages with the go command")
	}
	for _, tc := range []struct {
		pkg    string
		cycles int
		want   []string
	}{
		{"../../rebase", 0, []string{"no cycle of uses"}},
		{"./testdata/cycle", 1, []string{"a.go -> b.go -> a.go", "a.go uses b.go: B", "b.go uses a.go: C"}},
		{"./testdata/topdown", 0, []string{"a.go uses b.go: ", "2 files, no cycle of uses"}},
	} {
		var out bytes.Buffer
		n, err := run(&out, []string{tc.pkg}, true)
		if err != nil {
			t.Fatalf("%s: %v", tc.pkg, err)
		}
		if n != tc.cycles {
			t.Errorf("%s: %d cycles, want %d:\n%s", tc.pkg, n, tc.cycles, out.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.pkg, w, out.String())
			}
		}
	}
}

package applier

import (
	"os"
	"testing"
)

// mustWriteFile and mustMkdirAll set up a test's files; a failure stops the test where the
// setup broke instead of later, in an assertion about something else.
func mustWriteFile(t *testing.T, name string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, data, perm); err != nil {
		t.Fatal(err)
	}
}

func mustMkdirAll(t *testing.T, dir string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, perm); err != nil {
		t.Fatal(err)
	}
}

package testregistry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// FixturesDir is the checkout's testdata/ directory (images/ and snapshot-assets/, written
// by `make fixtures`). The fixtures are read from disk rather than embedded so that no
// shipped binary carries them. It is found from this source file's location (go test, go
// run) or, failing that (a -trimpath build), by walking up from the working directory to
// the module root.
func FixturesDir() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if isFixtureRoot(dir) {
				return filepath.Join(dir, "testdata"), nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("fixtures: no lvms-rebase checkout with testdata/images/ above this source file or the working directory (run from the repository, or pass the fixture directory)")
}

// isFixtureRoot reports whether dir is a module root holding the generated fixtures.
func isFixtureRoot(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "testdata", "images"))
	return err == nil && st.IsDir()
}

// DefaultFixtures is FixturesDir as a file system, the tree Start serves by default.
func DefaultFixtures() (fs.FS, error) {
	dir, err := FixturesDir()
	if err != nil {
		return nil, err
	}
	return os.DirFS(dir), nil
}

// MustDefaultFixtures is DefaultFixtures for tests: it fails t when the tree is missing.
func MustDefaultFixtures(t TB) fs.FS {
	t.Helper()
	fsys, err := DefaultFixtures()
	if err != nil {
		t.Fatalf("%v", fmt.Errorf("locating fixtures: %w", err))
	}
	return fsys
}

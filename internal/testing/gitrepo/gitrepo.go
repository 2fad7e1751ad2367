// Package gitrepo builds git repositories for tests with the real git: an isolated
// configuration, setup commands with an identity of their own, and files written by
// slash-separated path. Test support only.
package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
)

// Isolate keeps the developer's git configuration (a signing key, hooks, an identity) and any
// repository above the test's temporary directories out of the test.
func Isolate(t testing.TB) {
	t.Helper()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
}

// Git runs git in dir for the test's own setup (through internal/git, as the tool does), with
// an identity of its own, and returns its standard output; a failure, with git's stderr, fails
// the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, append([]string{"-c", "user.name=setup", "-c", "user.email=setup@localhost"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// WriteFile writes data at the slash-separated path name under dir with mode, creating the
// directories on the way.
func WriteFile(t testing.TB, dir, name, data string, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

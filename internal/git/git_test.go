package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// maxStderr is the runner's cap on the stderr an error keeps.
const maxStderr = 8 << 10

func newRepo(t *testing.T) string {
	t.Helper()
	gitrepo.Isolate(t)
	dir := t.TempDir()
	gitrepo.Git(t, dir, "init", "-q", "-b", "main")
	gitrepo.WriteFile(t, dir, "a.txt", "a\n", 0o644)
	gitrepo.Git(t, dir, "add", "a.txt")
	gitrepo.Git(t, dir, "commit", "-q", "-m", "a")
	gitrepo.Git(t, dir, "config", "user.name", "t")
	gitrepo.Git(t, dir, "config", "user.email", "t@localhost")
	return dir
}

// TestErrorNamesCommandDirAndStderr: a failing git is an *Error naming the command, the
// directory and what git printed on stderr.
func TestErrorNamesCommandDirAndStderr(t *testing.T) {
	dir := newRepo(t)
	_, err := git.Run(context.Background(), dir, "rev-parse", "--verify", "no-such-branch")
	var ge *git.Error
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "git rev-parse --verify no-such-branch in "+dir) ||
		!strings.Contains(ge.Stderr, "fatal: Needed a single revision") {
		t.Fatalf("error %v (%T), want a *git.Error naming command, dir and stderr", err, err)
	}
}

// TestEnvironmentNamesNoOtherRepository: the variables git exports to hooks (GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE) do not redirect the tool's git to another repository.
func TestEnvironmentNamesNoOtherRepository(t *testing.T) {
	dir, other := newRepo(t), newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	got, err := git.Line(context.Background(), dir, "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(dir); got != want {
		t.Errorf("git ran in %s, want %s", got, want)
	}
	if env := strings.Join(git.Environ(), "\n"); strings.Contains(env, "GIT_DIR=") || !strings.Contains(env, "GIT_OPTIONAL_LOCKS=0") {
		t.Errorf("environment:\n%s", env)
	}
}

// TestOutputIsCapped: a command printing more than MaxOutput is an error wrapping
// git.ErrOutputTooLarge, not a buffer that grows with the input.
func TestOutputIsCapped(t *testing.T) {
	dir := newRepo(t)
	gitrepo.WriteFile(t, dir, "big", strings.Repeat("x", 1<<16), 0o644)
	gitrepo.Git(t, dir, "add", "big")
	gitrepo.Git(t, dir, "commit", "-q", "-m", "big")
	out, err := git.Cmd{Dir: dir, Args: []string{"cat-file", "blob", "HEAD:big"}, MaxOutput: 1000}.Output(context.Background())
	if !errors.Is(err, git.ErrOutputTooLarge) || out != nil {
		t.Fatalf("got %d bytes, %v; want git.ErrOutputTooLarge", len(out), err)
	}
	if out, err := (git.Cmd{Dir: dir, Args: []string{"cat-file", "blob", "HEAD:big"}, MaxOutput: 1 << 16}).Output(context.Background()); err != nil || len(out) != 1<<16 {
		t.Fatalf("at the cap: %d bytes, %v", len(out), err)
	}
}

// TestStderrIsCapped: what a hook prints on stderr is kept only up to its cap in the error.
func TestStderrIsCapped(t *testing.T) {
	dir := newRepo(t)
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	gitrepo.WriteFile(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\nhead -c 1000000 /dev/zero | tr '\\0' x >&2\nexit 1\n", 0o755)
	_, err := git.Run(context.Background(), dir, "commit", "-q", "--allow-empty", "-m", "x")
	if err == nil || len(err.Error()) > maxStderr+1000 || !strings.Contains(err.Error(), "(truncated)") {
		t.Fatalf("error %.500s: %d bytes (hook %s), want at most ~%d with a truncation mark", err, len(err.Error()), hook, maxStderr)
	}
}

// TestCancelStopsGitAndItsLocks: cancelling the context stops a git that waits (here for a
// pre-commit hook), promptly, with the context's cause in the error; git gets SIGTERM and
// removes its index.lock, so the repository stays usable (SIGKILL would leave the lock).
func TestCancelStopsGitAndItsLocks(t *testing.T) {
	dir := newRepo(t)
	release := filepath.Join(t.TempDir(), "release")
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	started := filepath.Join(t.TempDir(), "started")
	gitrepo.WriteFile(t, dir, ".git/hooks/pre-commit",
		"#!/bin/sh\ntouch '"+started+"'\nwhile [ ! -e '"+release+"' ]; do sleep 0.05; done\n", 0o755)
	gitrepo.WriteFile(t, dir, "a.txt", "b\n", 0o644)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel(errors.New("interrupt"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := git.Run(ctx, dir, "commit", "-q", "-a", "-m", "b")
	if err == nil || !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("error %v, want the context's cause", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left behind after the cancel: %v", err)
	}
	if _, err := git.Run(context.Background(), dir, "commit", "-q", "--no-verify", "-a", "-m", "b"); err != nil {
		t.Errorf("the repository is not usable after the cancel: %v", err)
	}
}

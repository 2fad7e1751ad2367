// Package git is the one way the tool runs the git command (reading branches, worktrees,
// commits; tests build repositories with it too). Every run of git
//
//   - takes the caller's context: when the run is cancelled (SIGINT, SIGTERM, --timeout) git
//     and the hooks it runs (its process group) get SIGTERM, on which git removes its lock
//     files (index.lock, a ref's .lock), and SIGKILL after GracePeriod;
//   - runs in an environment that names no other repository: the variables git exports to a
//     hook (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, …) are dropped, so lvms-rebase started from
//     a hook of another repository works on the directory it was given; optional locks are off
//     (a status never rewrites the index); the user's configuration, hooks included, stays;
//   - reads at most MaxOutput bytes of output (more is an error, and git is stopped) and keeps
//     the start of its stderr for the error, which names the command and the directory.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxOutput caps what one git command may print when Cmd.MaxOutput is 0: a MicroShift
// tree's `ls-tree -r --long` is a few MB.
const DefaultMaxOutput = 64 << 20

// maxStderr is how much of git's stderr an error keeps.
const maxStderr = 8 << 10

// GracePeriod is how long a cancelled git may take to end after SIGTERM before it is killed.
var GracePeriod = 5 * time.Second

// repoVars are the variables that point git at a repository, an index or an object store other
// than the one in Cmd.Dir; git sets them for hooks, so they leak into a tool a hook starts.
var repoVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH", "GIT_IMPLICIT_WORK_TREE",
	"GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", "GIT_SHALLOW_FILE",
}

// Cmd is one git command.
type Cmd struct {
	// Dir is the directory git runs in (a work tree or a bare repository).
	Dir  string
	Args []string
	// Env adds KEY=VALUE variables to the cleaned environment (GIT_INDEX_FILE for a commit
	// made from an index of its own).
	Env []string
	// Stdin is git's standard input (none when nil).
	Stdin io.Reader
	// MaxOutput caps stdout in bytes (DefaultMaxOutput when 0).
	MaxOutput int64
}

// Error is a git command that failed: the command, where, how, and what git said.
type Error struct {
	Dir    string
	Args   []string
	Err    error
	Stderr string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s in %s: %v", strings.Join(e.Args, " "), e.Dir, e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrOutputTooLarge is wrapped when a command printed more than its MaxOutput.
var ErrOutputTooLarge = errors.New("output over the cap")

// Run runs git args in dir and returns its stdout.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return Cmd{Dir: dir, Args: args}.Output(ctx)
}

// Line runs git args in dir and returns its stdout without the trailing newline.
func Line(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := Run(ctx, dir, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// Output runs the command and returns its stdout.
func (c Cmd) Output(ctx context.Context) ([]byte, error) {
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	cmd := exec.CommandContext(ctx, "git", c.Args...)
	cmd.Dir, cmd.Stdin, cmd.Env = c.Dir, c.Stdin, Environ(c.Env...)
	// SIGTERM first, to git and its hooks: git removes its lock files on it; what still runs
	// after GracePeriod is killed.
	ownGroup(cmd)
	cmd.Cancel = func() error {
		if err := signalGroup(cmd, syscall.SIGTERM); err != nil {
			return cmd.Process.Kill()
		}
		time.AfterFunc(GracePeriod, func() { _ = signalGroup(cmd, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = GracePeriod
	stderr := &prefixBuffer{max: maxStderr}
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, c.fail(err, "")
	}
	if err := cmd.Start(); err != nil {
		return nil, c.fail(err, "")
	}
	out, rerr := io.ReadAll(io.LimitReader(pipe, max+1)) // safefile: git's stdout, a pipe read to max+1 bytes
	over := int64(len(out)) > max
	if over {
		stop(fmt.Errorf("%w of %d bytes", ErrOutputTooLarge, max))
		_, _ = io.Copy(io.Discard, pipe)
	}
	werr := cmd.Wait()
	switch {
	case over:
		return nil, c.fail(context.Cause(ctx), "")
	case werr != nil && ctx.Err() != nil:
		// Stopped by the caller's context: say why (the signal, the timeout), not "signal: terminated".
		return nil, c.fail(fmt.Errorf("%w (%v)", context.Cause(ctx), werr), stderr.String())
	case werr != nil:
		return nil, c.fail(werr, stderr.String())
	case rerr != nil:
		return nil, c.fail(rerr, stderr.String())
	}
	return out, nil
}

func (c Cmd) fail(err error, stderr string) error {
	return &Error{Dir: c.Dir, Args: c.Args, Err: err, Stderr: strings.TrimSpace(stderr)}
}

// Environ is the environment git runs in: the process's, without the variables that point
// at another repository, with optional locks off, plus extra.
func Environ(extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+1)
	for _, kv := range os.Environ() {
		if !isRepoVar(kv) && !strings.HasPrefix(kv, "GIT_OPTIONAL_LOCKS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_OPTIONAL_LOCKS=0")
	return append(env, extra...)
}

func isRepoVar(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, v := range repoVars {
		if name == v {
			return true
		}
	}
	return false
}

// prefixBuffer keeps the first max bytes written to it and drops the rest (git's stderr: a
// hook can print without bound).
type prefixBuffer struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (b *prefixBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) > room {
		b.truncated = true
	}
	if room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *prefixBuffer) String() string {
	if b.truncated {
		return b.buf.String() + " …(truncated)"
	}
	return b.buf.String()
}

package attack

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bound is the hang detector of invariant 4: a process still running after it is killed
// and reported as "did not end". It is no timing assertion: every row ends in seconds on a
// loaded machine, and a row that needs a minute is as broken as one that never ends.
const bound = 60 * time.Second

// scratch is where rows make their worlds (set up by TestMain).
var scratch string

// proc is one lvms-rebase process: its arguments, environment and working directory, and
// what to do when its stderr shows a line.
type proc struct {
	args []string
	env  []string
	dir  string
	when *trigger
}

// trigger acts on a running process when a line of its stderr contains at: after delay it
// runs then (another process, while this one holds its place) and sends sig (if any).
type trigger struct {
	at    string
	delay time.Duration
	sig   syscall.Signal
	then  func(t *testing.T, w *world)
	// marker, instead of a line of stderr, fires the trigger when the row's marker file
	// (world.marker) appears: a hook's output reaches git, not the tool's stderr.
	marker bool
	// during is then bound to the row's test and world; file is the marker's path.
	during func()
	file   string
}

// result is how a process ended.
type result struct {
	code           int
	stdout, stderr string
	ended          bool // false: killed by the hang detector
	fired          bool // the trigger's line was seen
}

func runProc(p proc) result {
	cmd := exec.Command(bin, p.args...)
	cmd.Env, cmd.Dir = p.env, p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return result{code: -1, stderr: err.Error(), ended: true}
	}
	if err := cmd.Start(); err != nil {
		return result{code: -1, stderr: err.Error(), ended: true}
	}
	var hung sync.Once
	ended := true
	timer := time.AfterFunc(bound, func() {
		hung.Do(func() { ended = false })
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	var stderr string
	fired := false
	if p.when != nil && p.when.file != "" {
		done := make(chan struct{})
		seen := watchMarker(p.when, cmd.Process.Pid, done)
		stderr, _ = readStderr(pipe, cmd.Process.Pid, nil)
		close(done)
		fired = <-seen
	} else {
		stderr, fired = readStderr(pipe, cmd.Process.Pid, p.when)
	}
	err = cmd.Wait()
	timer.Stop()
	hung.Do(func() {})
	// A child the tool left behind (git, a hook) must not outlive the row.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	_ = err
	return result{code: code, stdout: stdout.String(), stderr: stderr, ended: ended, fired: fired}
}

// readStderr collects the process's stderr line by line and fires the trigger on the first
// line that contains its text (an empty text: once its delay has passed since the start).
func readStderr(r io.Reader, pid int, when *trigger) (string, bool) {
	var all strings.Builder
	br := bufio.NewReader(r)
	fired := false
	if when != nil && when.at == "" {
		fired = true
		go when.fire(pid)
	}
	for {
		line, err := br.ReadString('\n')
		all.WriteString(line)
		if when != nil && !fired && strings.Contains(line, when.at) {
			fired = true
			when.fire(pid)
		}
		if err != nil {
			return all.String(), fired
		}
	}
}

// watchMarker fires the trigger once its file exists; it reports whether it did, once the
// trigger fired or the process's stderr closed (done).
func watchMarker(when *trigger, pid int, done <-chan struct{}) <-chan bool {
	seen := make(chan bool, 1)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := os.Lstat(when.file); err == nil {
				when.fire(pid)
				seen <- true
				return
			}
			select {
			case <-done:
				seen <- false
				return
			case <-tick.C:
			}
		}
	}()
	return seen
}

func (when *trigger) fire(pid int) {
	time.Sleep(when.delay)
	if when.during != nil {
		when.during()
	}
	switch when.sig {
	case 0:
	case syscall.SIGKILL: // a machine that dies takes the tool's children with it
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	default:
		_ = syscall.Kill(pid, when.sig)
	}
}

// Identity of the commits a row makes; a row about a missing identity drops these.
var gitIdentity = []string{"GIT_AUTHOR_NAME=attack", "GIT_AUTHOR_EMAIL=attack@localhost", "GIT_COMMITTER_NAME=attack", "GIT_COMMITTER_EMAIL=attack@localhost"}

// childEnv is the whole environment of a process: nothing of the developer's (credentials,
// kubeconfig, git configuration, CI) but PATH, a home of the row's own, and overrides: "K=V"
// sets K, a bare "K" removes it.
func childEnv(home string, overrides ...string) []string {
	env := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": home, "LANG": "C.UTF-8",
		"XDG_CACHE_HOME": filepath.Join(home, ".cache"), "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CEILING_DIRECTORIES": filepath.Dir(home),
	}
	for _, kv := range append(append([]string{}, gitIdentity...), overrides...) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// registryArgs reach the loopback registry r for every upstream the tool pulls from.
func registryArgs(host string, mirrors []string, cache string) []string {
	return append([]string{"--cache-dir", cache, "--insecure-registry", host}, mirrors...)
}

// treeArgs are a rebase's arguments on dir with the shared registry and cache.
func treeArgs(dir, cache string) []string {
	return append(append([]string{"--microshift-dir", dir}, registryArgs(reg.Host(), reg.MirrorFlags(), cache)...), reg.SignatureFlags()...)
}

package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// The tests of this file hold the git side of issue 28 at the binary: exit 0 means the
// commits hold what the lock records, a re-run after a commit that did not finish does not
// say "no changes", the person's work is never committed, branch names and the names derived
// from them are checked before any work, and a result branch holding a reviewer's commit is
// not moved. Each was seen failing on the main of before the fix.

// singleRun are the arguments of a rebase of testdata/microshift (a 4.16 tree).
var singleRun = []string{"--ocp", "4.18", "--allow-base-mismatch"}

// committedTree is testdata/microshift in a git work tree of its own, committed, with an
// isolated git configuration and an identity in the environment.
func committedTree(t *testing.T) string {
	t.Helper()
	gitrepo.Isolate(t)
	setGitIdentity(t)
	dir := copyTree(t, "../../../testdata/microshift")
	gitInit(t, dir)
	return dir
}

// hooksDir points dir's repository at a hooks directory outside the work tree and returns it.
func hooksDir(t *testing.T, dir string) string {
	t.Helper()
	hooks := t.TempDir()
	gitOut(t, dir, "config", "core.hooksPath", hooks)
	return hooks
}

func writeHook(t *testing.T, hooks, name, body string) {
	t.Helper()
	mustWriteFile(t, filepath.Join(hooks, name), []byte("#!/bin/sh\n"+body), 0o755)
}

// headHoldsTheLock checks that every file the lock records is committed in HEAD with the
// recorded bytes: what --check on a fresh checkout of HEAD compares.
func headHoldsTheLock(t *testing.T, dir string) {
	t.Helper()
	l := readLockFile(t, dir)
	for _, f := range l.Files {
		blob := gitOut(t, dir, "cat-file", "blob", "HEAD:"+f.Path)
		if sum := sha256.Sum256([]byte(blob)); hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("HEAD:%s does not hold the bytes the lock records", f.Path)
		}
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("uncommitted after the run:\n%s", st)
	}
}

// TestCommitRerunAfterACommitThatDidNotFinish: a --commit run whose swap finished but whose
// commit a pre-commit hook refused exits 1 saying the tree was written; the same command again
// must not say "no changes" and exit 0 (nothing committed, a PR body "No files changed"): it
// names the uncommitted files and stops before any request. A run without --commit says the
// files are not committed. Once they are, the command is a clean no-op.
func TestCommitRerunAfterACommitThatDidNotFinish(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := committedTree(t)
	hooks := hooksDir(t, dir)
	writeHook(t, hooks, "pre-commit", "echo 'pre-commit: lint failed' >&2; exit 1\n")
	body := filepath.Join(t.TempDir(), "pr.md")
	args := append(append([]string{}, singleRun...), "--commit", "--pr-body", body)
	code, out, errOut := e.run(dir, args...)
	if code != ExitError || !strings.Contains(errOut, "lint failed") {
		t.Fatalf("first run: exit %d, want 1 naming the hook\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the tree was written") {
		t.Errorf("first run: the error does not say the tree was written:\n%s", errOut)
	}
	head := gitOut(t, dir, "rev-parse", "HEAD")
	if err := os.Remove(filepath.Join(hooks, "pre-commit")); err != nil {
		t.Fatal(err)
	}
	mustWriteFile(t, body, []byte("stale\n"), 0o644)
	e.reg.ResetStats()
	code, out, errOut = e.run(dir, args...)
	if code != ExitError || !strings.Contains(errOut, "differ from HEAD") || !strings.Contains(errOut, "lvms-rebase.lock.yaml") ||
		strings.Contains(out, "no changes") {
		t.Errorf("second run: exit %d, want 1 naming the uncommitted files\n%s\n%s", code, out, errOut)
	}
	if n := e.reg.Stats().Requests("", ""); n != 0 {
		t.Errorf("second run: %d registry requests before refusing", n)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Error("second run moved HEAD")
	}
	if md, _ := os.ReadFile(body); string(md) != "stale\n" {
		t.Errorf("second run wrote a PR body:\n%s", md)
	}
	code, out, errOut = e.run(dir, append(append([]string{}, singleRun...), "-o", "json")...)
	var res struct{ Uncommitted []string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res.Uncommitted) == 0 ||
		!strings.Contains(errOut, "not committed") {
		t.Errorf("a run without --commit: exit %d, uncommitted %q, %v\n%s", code, res.Uncommitted, err, errOut)
	}
	// The warning is one line naming a few of the files and counting the rest; -o json lists all.
	if n := len(res.Uncommitted); n > 5 && (!strings.Contains(errOut, fmt.Sprintf("and %d more", n-5)) || strings.Contains(errOut, res.Uncommitted[5])) {
		t.Errorf("a run without --commit: the warning should name 5 of the %d files and count the rest:\n%s", n, errOut)
	}
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-qm", "the earlier run's write")
	code, out, errOut = e.run(dir, args...)
	if code != 0 || !strings.Contains(out, "no changes") {
		t.Errorf("after committing: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestCommitTakesNoneOfThePersonsWork: an uncommitted edit of a file a --commit run writes
// and commits (a recipe, a component file, a release JSON staged, a new file in a component
// directory) would ride along in the tool's commit; the run refuses before any request and
// changes nothing, naming the file. Work elsewhere (a staged NOTES, an edited OVN asset) is not
// its business and stays out of its commits.
func TestCommitTakesNoneOfThePersonsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	for _, tc := range []struct {
		name, file string
		edit       func(t *testing.T, dir string)
	}{
		{"a recipe edited", "scripts/auto-rebase/assets.yaml", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, "scripts/auto-rebase/assets.yaml"), "# the person's note\n")
		}},
		{"a component file edited", "assets/components/lvms/", func(t *testing.T, dir string) {
			matches, _ := filepath.Glob(filepath.Join(dir, "assets/components/lvms/*.yaml"))
			appendFile(t, matches[0], "# the person's note\n")
		}},
		{"a release JSON staged", "assets/release/release-x86_64.json", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "assets/release/release-x86_64.json")
			data, _ := os.ReadFile(p)
			mustWriteFile(t, p, []byte(strings.Replace(string(data), "{", "{\n  \"note\": \"the person's\",", 1)), 0o644)
			gitOut(t, dir, "add", "assets/release/release-x86_64.json")
		}},
		{"a new file in a component directory", "assets/components/csi-snapshot-controller/mine.yaml", func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, "assets/components/csi-snapshot-controller/mine.yaml", "kind: ConfigMap\n", 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := committedTree(t)
			tc.edit(t, dir)
			before := treeHash(t, dir)
			e.reg.ResetStats()
			code, _, errOut := e.run(dir, append(append([]string{}, singleRun...), "--commit")...)
			if code != ExitError || !strings.Contains(errOut, tc.file) || !strings.Contains(errOut, "not committed") {
				t.Errorf("exit %d, want 1 naming %s\n%s", code, tc.file, errOut)
			}
			if n := e.reg.Stats().Requests("", ""); n != 0 || treeHash(t, dir) != before {
				t.Errorf("%d registry requests; tree changed: %v", n, treeHash(t, dir) != before)
			}
			if n := strings.Count(gitOut(t, dir, "log", "--format=%s"), "\n"); n != 1 {
				t.Errorf("%d commits, want the base alone", n)
			}
		})
	}
	t.Run("work elsewhere stays out", func(t *testing.T) {
		dir := committedTree(t)
		mustWriteFile(t, filepath.Join(dir, "NOTES"), []byte("wip\n"), 0o644)
		gitOut(t, dir, "add", "NOTES")
		appendFile(t, filepath.Join(dir, "assets/components/ovn/namespace.yaml"), "# edited\n")
		if code, out, errOut := e.run(dir, append(append([]string{}, singleRun...), "--commit")...); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if files := gitOut(t, dir, "log", "--format=", "--name-only", "HEAD~3..HEAD"); strings.Contains(files, "NOTES") || strings.Contains(files, "ovn") {
			t.Errorf("the run's commits took the person's work:\n%s", files)
		}
		if st := gitOut(t, dir, "status", "--porcelain"); st != "A  NOTES\n M assets/components/ovn/namespace.yaml\n" {
			t.Errorf("status after the run:\n%s", st)
		}
	})
}

func appendFile(t *testing.T, name, text string) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	mustWriteFile(t, name, append(data, text...), 0o644)
}

// TestCommitHoldsTheLocksBytes: a committer with core.autocrlf=true (whose work tree holds
// CRLF files) gets commits with exactly the bytes the lock records, as --check of any checkout
// of them compares; a pre-commit hook that reformats a file the run wrote makes the run fail
// naming it, instead of exiting 0 with commits the next --check rejects.
func TestCommitHoldsTheLocksBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	t.Run("core.autocrlf=true", func(t *testing.T) {
		// A tree as a run left it, one value since changed by hand: the run sets it back in
		// place, keeping the file's form (CRLF here).
		dir := copyTree(t, "../../../testdata/golden/tree-4.22")
		version := filepath.Join(dir, "assets/components/lvms/topolvm-configmap_lvms-version.yaml")
		data, err := os.ReadFile(version)
		if err != nil || !strings.Contains(string(data), "v4.21.1-4") {
			t.Fatalf("%s: %v\n%s", version, err, data)
		}
		mustWriteFile(t, version, []byte(strings.Replace(string(data), "v4.21.1-4", "v4.21.1-3", 1)), 0o644)
		gitrepo.Isolate(t)
		setGitIdentity(t)
		gitInit(t, dir)
		gitOut(t, dir, "config", "core.autocrlf", "true")
		// Checked out again, the component files have CRLF line ends in the work tree.
		if err := os.RemoveAll(filepath.Join(dir, "assets/components")); err != nil {
			t.Fatal(err)
		}
		gitOut(t, dir, "checkout", "HEAD", "--", "assets/components")
		if code, out, errOut := e.run(dir, "--commit"); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		headHoldsTheLock(t, dir)
	})
	t.Run("a formatting pre-commit hook", func(t *testing.T) {
		dir := committedTree(t)
		writeHook(t, hooksDir(t, dir), "pre-commit",
			"git diff --cached --name-only | grep 'assets/components/lvms/.*yaml$' | while read f; do echo '# formatted' >> \"$f\"; git add \"$f\"; done\n")
		code, out, errOut := e.run(dir, append(append([]string{}, singleRun...), "--commit")...)
		if code != ExitError || !strings.Contains(errOut, "assets/components/lvms/") || !strings.Contains(errOut, "a commit hook changed it") {
			t.Errorf("exit %d, want 1 naming the reformatted file\n%s\n%s", code, out, errOut)
		}
	})
}

// fleetState is what a refused multi-branch run must leave as it was: every ref, the
// checked-out branch, the index and the work tree.
func fleetState(t *testing.T, dir string) string {
	t.Helper()
	return gitOut(t, dir, "for-each-ref") + gitState(t, dir)
}

// TestFleetRefusesNamesBeforeAnyWork: --branches given empty (an unset CI variable), blank,
// commas only, a revision (main~1, HEAD^), a name twice, two names whose PR bodies or result
// branches collide (a/b and a_b; Main and main on a case-insensitive file system), and an
// empty --pr-body-dir are usage errors before any request, any ref or any file changes —
// never a plain run committing onto the checked-out branch.
func TestFleetRefusesNamesBeforeAnyWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone")
	}
	gitrepo.Isolate(t)
	setGitIdentity(t)
	e := newE2E(t)
	dir := makeClone(t)
	for _, b := range []string{"a/b", "a_b", "Main"} {
		gitOut(t, dir, "branch", b, "main")
	}
	bodies := filepath.Join(t.TempDir(), "pr")
	for _, args := range [][]string{
		{"--branches", ""}, {"--branches", "", "--commit"}, {"--branches", " "}, {"--branches", ","}, {"--branches", "main,,release-4.17"},
		{"--branches", "main~1"}, {"--branches", "HEAD^"}, {"--branches", "main", "--branches", "main"},
		{"--branches", "a/b,a_b", "--pr-body-dir", bodies}, {"--branches", "Main,main"},
		{"--branches", "main", "--pr-body-dir", ""}, {"--branches", "main", "--microshift-dir", ""},
	} {
		before := fleetState(t, dir)
		e.reg.ResetStats()
		code, out, errOut := e.run(dir, args...)
		if code != ExitUsage || !strings.Contains(errOut, "--") {
			t.Errorf("%q: exit %d, want %d\n%s\n%s", args, code, ExitUsage, out, errOut)
		}
		if n := e.reg.Stats().Requests("", ""); n != 0 {
			t.Errorf("%q: %d registry requests", args, n)
		}
		if fleetState(t, dir) != before {
			t.Errorf("%q: refs, HEAD, index or work tree changed", args)
		}
		if _, err := os.Stat(bodies); err == nil {
			t.Errorf("%q: the PR body directory was made", args)
		}
	}
}

// TestFleetPreflight: what would make a branch's result fail after its whole rebase — no git
// identity, a branch named lvms-rebase that takes lvms-rebase/<b>'s name — is found before any
// request; a name that is a tag is that branch's error, named as such.
func TestFleetPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone")
	}
	gitrepo.Isolate(t)
	e := newE2E(t)
	for _, tc := range []struct {
		name, want string
		setup      func(t *testing.T, dir string)
		branches   string
	}{
		{"no identity", "identity", func(t *testing.T, dir string) {
			for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
				t.Setenv(k, "")
			}
			gitOut(t, dir, "config", "user.useConfigOnly", "true")
		}, "main"},
		{"a branch named lvms-rebase", "a branch named lvms-rebase exists", func(t *testing.T, dir string) {
			setGitIdentity(t)
			gitOut(t, dir, "branch", "lvms-rebase", "main")
		}, "main"},
		{"a tag", "it is a tag", func(t *testing.T, dir string) {
			setGitIdentity(t)
			gitOut(t, dir, "tag", "v4.17", "release-4.17")
		}, "v4.17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeClone(t)
			tc.setup(t, dir)
			before := fleetState(t, dir)
			e.reg.ResetStats()
			code, out, errOut := e.run(dir, "--branches", tc.branches, "--commit")
			if code != ExitError || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, want 1 with %q\n%s\n%s", code, tc.want, out, errOut)
			}
			if n := e.reg.Stats().Requests("", ""); n != 0 || fleetState(t, dir) != before {
				t.Errorf("%d registry requests; the clone changed: %v", n, fleetState(t, dir) != before)
			}
		})
	}
}

// TestFleetKeepsAReviewersCommit: a second run replaces lvms-rebase/<b> the tool made, but a
// lvms-rebase/<b> holding a commit somebody added (a reviewer's fix-up) is that branch's error,
// named with the commit, and the branch stays where it was; -o yaml prints the report.
func TestFleetKeepsAReviewersCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	gitrepo.Isolate(t)
	setGitIdentity(t)
	e := newE2E(t)
	dir := makeClone(t)
	for i := range 2 {
		if code, out, errOut := e.run(dir, "--branches", "release-4.22", "--commit"); code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	fix := strings.TrimSpace(gitOut(t, dir, "commit-tree", "-p", "lvms-rebase/release-4.22", "-m", "reviewer: fix-up", "lvms-rebase/release-4.22^{tree}"))
	gitOut(t, dir, "update-ref", "refs/heads/lvms-rebase/release-4.22", fix)
	code, out, errOut := e.run(dir, "--branches", "release-4.22", "--commit", "-o", "yaml")
	if code != ExitError || !strings.Contains(out, "reviewer: fix-up") || !strings.Contains(out, "kind: BranchRebaseList") {
		t.Errorf("exit %d, want 1 naming the reviewer's commit in a YAML report\n%s\n%s", code, out, errOut)
	}
	if got := strings.TrimSpace(gitOut(t, dir, "rev-parse", "lvms-rebase/release-4.22")); got != fix {
		t.Errorf("lvms-rebase/release-4.22 moved from the reviewer's %s to %s", fix, got)
	}
}

// TestFleetSignals: SIGINT and SIGTERM stop a multi-branch run with 130 and 143, its
// worktrees removed and no result branch moved; a run killed outright leaves its worktree,
// which the next run reports and removes (and only that one: a person's worktree stays).
func TestFleetSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	gitrepo.Isolate(t)
	setGitIdentity(t)
	e := newE2E(t)
	e.reg.Inject(testregistry.Fault{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStall})
	dir := makeClone(t)
	mine := filepath.Join(t.TempDir(), "mine")
	gitOut(t, dir, "worktree", "add", "-q", mine, "release-4.17")
	for _, sig := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, ExitSIGINT}, {syscall.SIGTERM, ExitSIGTERM}, {os.Kill, -1}} {
		code := signalledFleet(t, e, dir, sig.sig)
		if code != sig.code {
			t.Errorf("%v: exit %d, want %d", sig.sig, code, sig.code)
		}
		if refs := gitOut(t, dir, "for-each-ref", "refs/heads/lvms-rebase/"); refs != "" {
			t.Errorf("%v: result branches after the signal:\n%s", sig.sig, refs)
		}
	}
	wts := gitOut(t, dir, "worktree", "list", "--porcelain")
	if strings.Count(wts, "worktree ") != 3 {
		t.Fatalf("after SIGKILL: want the clone, the person's worktree and the killed run's:\n%s", wts)
	}
	code, out, errOut := e.run(dir, "--branches", "no-such-branch")
	if code != ExitError || !strings.Contains(out+errOut, "removed the stale worktree") {
		t.Errorf("next run: exit %d, want the stale worktree reported\n%s\n%s", code, out, errOut)
	}
	wts = gitOut(t, dir, "worktree", "list", "--porcelain")
	if strings.Count(wts, "worktree ") != 2 || !strings.Contains(wts, mine) {
		t.Errorf("after the next run: want the clone and the person's worktree:\n%s", wts)
	}
}

// signalledFleet runs a multi-branch rebase of main in a process of its own, sends sig once
// its phase resolve started (the registry stalls its blobs; logfmt's record of the start, which
// --log-format text keeps for scripts) and returns the exit code (-1 when killed).
func signalledFleet(t *testing.T, e *e2e, dir string, sig os.Signal) int {
	t.Helper()
	args, _ := json.Marshal(e.args(dir, "--branches", "main", "--commit", "-v", "1", "--log-format", "text"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), "LVMS_REBASE_MAIN_ARGS="+string(args))
	stderr := &lineWaiter{want: "phase resolve", seen: make(chan struct{})}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-stderr.seen:
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		<-done
	case <-done:
		t.Fatalf("the run ended before its phase resolve:\n%s", stderr.String())
	}
	return cmd.ProcessState.ExitCode()
}

// lineWaiter collects a process's output and closes seen once want was written.
type lineWaiter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestFleetBranchWithALinkedRecord: a branch whose bundle record is committed as a symbolic
// link to /dev/zero is that branch's error (before its worktree), and the other branch of the
// run is still rebased.
func TestFleetBranchWithALinkedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	gitrepo.Isolate(t)
	setGitIdentity(t)
	e := newE2E(t)
	dir := makeClone(t)
	gitOut(t, dir, "checkout", "-q", "-f", "-b", "linked", "release-4.22")
	record := filepath.Join(dir, "scripts/auto-rebase/last_rebase_lvms.sh")
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", record); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "commit", "-qam", "a record as a link")
	code, out, errOut := e.run(dir, "--branches", "linked,release-4.17", "-o", "json")
	var rep fleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, out, errOut)
	}
	if code != ExitError || len(rep.Items) != 2 || !strings.Contains(rep.Items[0].Error, "symbolic link") || rep.Items[1].Error != "" {
		t.Errorf("exit %d, want 1 with the linked branch's error and release-4.17 rebased: %+v", code, rep)
	}
}

// TestOutdatedNeverChecksNothing: in a clone as CI checks it out (detached HEAD, branches only
// as origin/*) outdated has no branch to check, which is an error naming the remote-tracking
// branches, not "every branch current"; --branches given empty is a usage error, not the
// default set; a pinned bundle or payload, which outdated cannot honour, is a usage error.
func TestOutdatedNeverChecksNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone")
	}
	gitrepo.Isolate(t)
	e := newE2E(t)
	dir := makeClone(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--branches", ""}, ExitUsage, "--branches"},
		{[]string{"--branches", ","}, ExitUsage, "--branches"},
		{[]string{"--branches", "main~1"}, ExitUsage, "--branches"},
		{[]string{"--lvms-bundle", "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.0"}, ExitUsage, "--lvms-bundle"},
		{[]string{"--ocp-release", "quay.io/openshift-release-dev/ocp-release:4.18.1-{arch}"}, ExitUsage, "--ocp-release"},
		{[]string{"--microshift-dir", ""}, ExitUsage, "--microshift-dir"},
	} {
		code, out, errOut := e.run(dir, append([]string{"outdated"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("outdated %q: exit %d, want %d naming %s\n%s\n%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
	for _, b := range []string{"main", "release-4.17", "release-4.21", "release-4.22"} {
		gitOut(t, dir, "update-ref", "refs/remotes/origin/"+b, "refs/heads/"+b)
	}
	gitOut(t, dir, "checkout", "-q", "-f", "--detach", "main")
	gitOut(t, dir, "branch", "-q", "-D", "main", "release-4.17", "release-4.21", "release-4.22", "feature")
	code, out, errOut := e.run(dir, "outdated")
	if code != ExitError || !strings.Contains(errOut, "no branch to check") || !strings.Contains(errOut, "origin/main") {
		t.Errorf("CI clone: exit %d, want 1 naming the empty set\n%s\n%s", code, out, errOut)
	}
}

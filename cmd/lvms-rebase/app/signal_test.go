package app

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/binary"
)

// The tests here signal and kill a real lvms-rebase at precise points of the swap. The
// binary is built with -tags lvmsrebase_failpoints (rebase/tree/failpoint.go): with
// LVMS_REBASE_PAUSE_AT=<step> it pauses there until a signal cancels it.

// failpointBinary builds lvms-rebase with its failpoints into dir.
func failpointBinary(t *testing.T) string {
	t.Helper()
	bin, err := binary.Build(t.TempDir(), binary.FailpointsTag)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// gitEnv gives git an identity for --commit in the child process.
var gitEnv = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost"}

// pausedRun starts bin on dir paused at step, waits for the pause, sends sig and returns
// the exit code and stderr.
func (e *e2e) pausedRun(bin, dir, step string, sig syscall.Signal, args ...string) (int, string) {
	t := e.t
	t.Helper()
	cmd := exec.Command(bin, e.args(dir, args...)...)
	cmd.Env = append(append(os.Environ(), gitEnv...), "LVMS_REBASE_PAUSE_AT="+step)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	paused := false
	for !paused && sc.Scan() {
		lines = append(lines, sc.Text())
		paused = strings.HasPrefix(sc.Text(), "failpoint: paused at "+step)
	}
	if paused {
		_ = cmd.Process.Signal(sig)
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	_ = cmd.Wait()
	out := strings.Join(lines, "\n")
	if !paused {
		t.Fatalf("lvms-rebase did not pause at %q (exit %d):\n%s", step, cmd.ProcessState.ExitCode(), out)
	}
	if strings.Contains(out, "s3cret-token") {
		t.Fatalf("credentials printed:\n%s", out)
	}
	return cmd.ProcessState.ExitCode(), out
}

// files reads every file under root except git's.
func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := readTree(t, root)
	for p := range out {
		if strings.HasPrefix(p, ".git/") {
			delete(out, p)
		}
	}
	return out
}

func sameFiles(t *testing.T, what string, want, got map[string][]byte) {
	t.Helper()
	for p := range maps.Keys(want) {
		if _, ok := got[p]; !ok {
			t.Errorf("%s: %s missing", what, p)
		} else if string(got[p]) != string(want[p]) {
			t.Errorf("%s: %s differs", what, p)
		}
	}
	for p := range maps.Keys(got) {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: unexpected %s", what, p)
		}
	}
}

// TestSignalDuringSwap sends SIGTERM or SIGINT to a real `lvms-rebase --commit --pr-body`
// paused at each kind of swap point. Before the journal the tree stays as it was; from the
// journal on the swap completes. Either way the run stops there: no commit, no PR body,
// exit 143 (SIGTERM) or 130 (SIGINT), and the error names the phase. On main before this
// change the swap ignored the signal and went on to commit, exiting 0.
func TestSignalDuringSwap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lvms-rebase and runs it end to end")
	}
	bin := failpointBinary(t)
	e := newE2E(t)
	args := []string{"--ocp", "4.18", "--allow-base-mismatch"}
	ref := copyTree(t, "../../../testdata/microshift")
	if code, _, errOut := e.run(ref, args...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, errOut)
	}
	after := files(t, ref)
	for _, tc := range []struct {
		step     string
		sig      syscall.Signal
		code     int
		complete bool
	}{
		{"stage ", syscall.SIGTERM, ExitSIGTERM, false},
		{"journaled", syscall.SIGTERM, ExitSIGTERM, true},
		{"backup ", syscall.SIGINT, ExitSIGINT, true},
		{"place ", syscall.SIGTERM, ExitSIGTERM, true},
		{"placed", syscall.SIGINT, ExitSIGINT, true},
		{"committed", syscall.SIGTERM, ExitSIGTERM, true},
	} {
		name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[tc.sig]
		t.Run(name+" at "+tc.step, func(t *testing.T) {
			dir := copyTree(t, "../../../testdata/microshift")
			gitInit(t, dir)
			before, head := files(t, dir), gitOut(t, dir, "rev-parse", "HEAD")
			body := filepath.Join(t.TempDir(), "pr.md")
			code, out := e.pausedRun(bin, dir, tc.step, tc.sig, append(args, "--commit", "--pr-body", body)...)
			if code != tc.code || !strings.Contains(out, "interrupted by "+name+" in phase write") {
				t.Fatalf("exit %d, want %d and an error naming the signal and phase write:\n%s", code, tc.code, out)
			}
			if h := gitOut(t, dir, "rev-parse", "HEAD"); h != head {
				t.Errorf("a commit was made after the signal:\n%s", gitOut(t, dir, "log", "--oneline"))
			}
			if _, err := os.Stat(body); err == nil {
				t.Error("a PR body was written after the signal")
			}
			want, what := before, "tree after a signal before the swap"
			if tc.complete {
				want, what = after, "tree after a signal during the swap"
				if !strings.Contains(out, "was completed") || !strings.Contains(out, "stopped before the PR body and the commits") {
					t.Errorf("the error does not say the swap completed and what was skipped:\n%s", out)
				}
			} else if !strings.Contains(out, "the tree is untouched") {
				t.Errorf("the error does not say the tree is untouched:\n%s", out)
			}
			sameFiles(t, what, want, files(t, dir))
		})
	}
}

// TestKillDuringSwapThenRecover SIGKILLs a real lvms-rebase at swap points. Then --dry-run,
// --diff and --check each report the pending recovery, fail and leave every byte as it is
// (the work directory included); a hand edit made after the crash survives the next write
// run, which names it as a conflict with what to do; once the person removes the work
// directory, a write run completes the rebase.
func TestKillDuringSwapThenRecover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lvms-rebase and runs it end to end")
	}
	bin := failpointBinary(t)
	e := newE2E(t)
	args := []string{"--ocp", "4.18", "--allow-base-mismatch"}
	ref := copyTree(t, "../../../testdata/microshift")
	if code, _, errOut := e.run(ref, args...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, errOut)
	}
	after, pristine := files(t, ref), files(t, "../../../testdata/microshift")
	const edited = "assets/release/release-x86_64.json"
	for _, tc := range []struct {
		step, action string
		handEdit     bool
	}{
		{"backup ", "rolled back", false},
		{"place ", "rolled back", true},
		{"committed", "rolled forward", false},
		{"committed", "rolled forward", true},
	} {
		t.Run(fmt.Sprintf("%s edit=%v", tc.step, tc.handEdit), func(t *testing.T) {
			dir := copyTree(t, "../../../testdata/microshift")
			e.pausedRun(bin, dir, tc.step, syscall.SIGKILL, args...)
			// The person fixes up the release JSON as they want it (from the pristine copy).
			handEdited := strings.Replace(string(pristine[edited]), `"images": {`, `"images": {`+"\n    \"by-hand\": \"quay.io/x/y@sha256:0\",", 1)
			if tc.handEdit {
				if err := os.WriteFile(filepath.Join(dir, edited), []byte(handEdited), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			crashed := treeHash(t, dir)
			for _, mode := range []string{"--dry-run", "--diff", "--check"} {
				code, _, errOut := e.run(dir, append(args, mode)...)
				if mode == "--check" {
					code, _, errOut = e.run(dir, mode)
				}
				if code != ExitError || !strings.Contains(errOut, "an interrupted lvms-rebase write is pending") ||
					!strings.Contains(errOut, "without "+mode) {
					t.Errorf("%s: exit %d, want %d and a report of the pending recovery:\n%s", mode, code, ExitError, errOut)
				}
				if treeHash(t, dir) != crashed {
					t.Fatalf("%s modified the crashed tree", mode)
				}
			}
			code, _, errOut := e.run(dir, args...)
			if tc.handEdit {
				if code != ExitError || !strings.Contains(errOut, edited+": changed since the interrupted write") || !strings.Contains(errOut, "then remove ") {
					t.Fatalf("write run after a hand edit: exit %d, want a conflict naming %s:\n%s", code, edited, errOut)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, edited)); string(got) != handEdited {
					t.Fatalf("the hand edit was overwritten: %q", got)
				}
				work, _ := filepath.Glob(filepath.Join(dir, ".lvms-rebase-*"))
				if len(work) != 1 {
					t.Fatalf("work directory not kept: %v", work)
				}
				if err := os.RemoveAll(work[0]); err != nil {
					t.Fatal(err)
				}
				code, _, errOut = e.run(dir, args...)
			} else if !strings.Contains(errOut, tc.action) {
				t.Errorf("the recovering run does not say %q:\n%s", tc.action, errOut)
			}
			if code != 0 {
				t.Fatalf("write run: exit %d\n%s", code, errOut)
			}
			got := files(t, dir)
			if tc.handEdit {
				// The person's extra entry is not a storage key: the rebase keeps it (and the
				// lock records that file's new hash).
				if !strings.Contains(string(got[edited]), `"by-hand"`) {
					t.Errorf("the write run after resolving dropped the hand-edited entry:\n%s", got[edited])
				}
				got, want := maps.Clone(got), maps.Clone(after)
				for _, p := range []string{edited, "scripts/auto-rebase/lvms-rebase.lock.yaml"} {
					delete(got, p)
					delete(want, p)
				}
				sameFiles(t, "tree after recovery and a write run", want, got)
				return
			}
			sameFiles(t, "tree after recovery and a write run", after, got)
		})
	}
}

// TestJournalOutsideTreeTouchesNothing plants journals whose entries lead out of the tree
// (../victim, in today's format and in the one earlier versions wrote) and runs every mode:
// each refuses with an error naming the journal, the file outside and the tree keep every
// byte. On main before this change even --dry-run deleted ../victim.
func TestJournalOutsideTreeTouchesNothing(t *testing.T) {
	e := newE2E(t)
	sum := sha256.Sum256([]byte("precious\n"))
	for name, j := range map[string]any{
		"v1": map[string]any{"add": []string{"../victim"}},
		"v2": map[string]any{"version": 2, "files": []map[string]string{{"path": "../victim", "new": "sha256:" + hex.EncodeToString(sum[:])}}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyTree(t, "../../../testdata/microshift")
			victim := filepath.Join(filepath.Dir(dir), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(dir, ".lvms-rebase-planted")
			b, _ := json.Marshal(j)
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, "journal.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			before := treeHash(t, dir)
			for _, mode := range [][]string{{"--dry-run"}, {"--diff"}, {"--check"}, {}} {
				code, _, errOut := e.run(dir, append([]string{"--ocp", "4.18", "--allow-base-mismatch"}, mode...)...)
				if len(mode) == 1 && mode[0] == "--check" {
					code, _, errOut = e.run(dir, mode...)
				}
				if code != ExitError || !strings.Contains(errOut, "recovery touched nothing") || !strings.Contains(errOut, work) {
					t.Errorf("%v: exit %d, want %d and a refusal naming the journal:\n%s", mode, code, ExitError, errOut)
				}
				if got, err := os.ReadFile(victim); err != nil || string(got) != "precious\n" {
					t.Fatalf("%v touched the file outside the tree: %q, %v", mode, got, err)
				}
				if treeHash(t, dir) != before {
					t.Fatalf("%v modified the tree", mode)
				}
			}
		})
	}
}

package tree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestKillHelper is not a test on its own: TestKillAtEveryStep runs the test binary with
// TREE_KILL_ROOT set, and this function then takes the tree lock, starts a Write and pauses
// it at step TREE_KILL_AT until the parent kills the process with SIGKILL.
func TestKillHelper(t *testing.T) {
	root := os.Getenv("TREE_KILL_ROOT")
	if root == "" {
		return
	}
	at, _ := strconv.Atoi(os.Getenv("TREE_KILL_AT"))
	unlock, err := Lock(root)
	if err != nil {
		fmt.Println("lock failed:", err)
		os.Exit(1)
	}
	files := want()
	if mode := os.Getenv("TREE_KILL_MODE"); mode != "" {
		files = failMarkerFsync(at, mode == "marker-kept")
	} else {
		n := 0
		stepHook = func(_ context.Context, step string) {
			if n == at {
				pause(fmt.Sprint(n, ": ", step))
			}
			n++
		}
	}
	if _, err := Write(root, files, managed); err != nil {
		fmt.Println("write failed:", err)
	}
	unlock() // os.Exit runs no deferred calls
	fmt.Println("finished")
	os.Exit(0)
}

// pause tells the parent test where the helper stopped and waits for its SIGKILL.
func pause(where string) {
	fmt.Printf("paused at %s\n", where)
	os.Stdout.Sync()
	time.Sleep(time.Hour)
}

// steps lists every hook point of a Write of want() onto a fresh seed.
func steps(t *testing.T) []string {
	var out []string
	stepHook = func(_ context.Context, s string) { out = append(out, s) }
	defer func() { stepHook = func(context.Context, string) {} }()
	if _, err := Write(seed(t), want(), managed); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKillAtEveryStep kills a real writer process (SIGKILL) at every step of the swap —
// staging, after the journal, before each backup, mkdir and placement, after the last
// placement and after the commit marker — and requires the next run to repair the tree every
// time: Recover restores the state before (rolled back, or staging discarded) or completes
// it (rolled forward), Pending (what --dry-run, --diff and --check call) predicts that action
// and modifies nothing, and a following Write produces exactly the expected tree. While the
// killed writer is paused, a second writer is refused with "another lvms-rebase holds".
func TestKillAtEveryStep(t *testing.T) {
	all := steps(t)
	ref := seed(t)
	if _, err := Write(ref, want(), managed); err != nil {
		t.Fatal(err)
	}
	wantAfter := hashTree(t, ref)
	for i, step := range all {
		t.Run(fmt.Sprintf("%02d %s", i, step), func(t *testing.T) {
			root := seed(t)
			before := hashTree(t, root)
			killAt(t, root, i)
			pending := assertPendingReadOnly(t, root)
			recs, err := Recover(root, scope)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if len(recs) != 1 {
				t.Fatalf("Recover found %d interrupted writes, want 1: %+v", len(recs), recs)
			}
			got := hashTree(t, root)
			if len(pending) != 1 || pending[0].Action != recs[0].Action || !pending[0].Pending {
				t.Fatalf("Pending said %+v, Recover did %+v", pending, recs)
			}
			switch recs[0].Action {
			case "rolled back", "discarded":
				if diff := cmp.Diff(before, got); diff != "" {
					t.Fatalf("%s: tree differs from before the killed run (-before +got):\n%s", recs[0], diff)
				}
			case "rolled forward":
				if diff := cmp.Diff(wantAfter, got); diff != "" {
					t.Fatalf("%s: tree differs from a complete write (-want +got):\n%s", recs[0], diff)
				}
			default:
				t.Fatalf("unknown action %q", recs[0].Action)
			}
			if _, err := Write(root, want(), managed); err != nil {
				t.Fatalf("next run: %v", err)
			}
			if diff := cmp.Diff(wantAfter, hashTree(t, root)); diff != "" {
				t.Fatalf("next run's tree (-want +got):\n%s", diff)
			}
		})
	}
	// The decisions must cover both directions, or the test would prove little.
	if n := len(all); n < 8 || all[n-1] != "committed" || all[n-2] != "placed" {
		t.Fatalf("unexpected step list %v", all)
	}
}

// killAt runs the helper until it pauses at step i, checks that the tree is locked, and
// kills it with SIGKILL.
func killAt(t *testing.T, root string, i int, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(append(os.Environ(), "TREE_KILL_ROOT="+root, "TREE_KILL_AT="+strconv.Itoa(i)), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	paused := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "paused at ") {
			paused = true
			break
		}
		if strings.Contains(sc.Text(), "failed") || sc.Text() == "finished" {
			break
		}
	}
	if paused {
		if _, err := Lock(root); err == nil || !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another lvms-rebase holds "+root) {
			t.Errorf("second writer while the first runs: err = %v, want ErrLocked", err)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if !paused {
		t.Fatalf("helper did not pause at step %d", i)
	}
}

// TestLockExcludesSecondWriter: in one process too, a second Lock on the same tree fails at
// once and names the tree; after unlock it succeeds.
func TestLockExcludesSecondWriter(t *testing.T) {
	root := t.TempDir()
	unlock, err := Lock(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(root); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another lvms-rebase holds") {
		t.Fatalf("second Lock: %v", err)
	}
	unlock()
	u2, err := Lock(root)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	u2()
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("Lock left files in the tree: %v", entries)
	}
}

// TestRecoverUnreadableJournal keeps the backups and says where they are.
func TestRecoverUnreadableJournal(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, workPrefix+"x")
	if err := os.MkdirAll(filepath.Join(work, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, journalName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(root, scope); err == nil || !strings.Contains(err.Error(), "backups are in") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(work); err != nil {
		t.Fatalf("work directory removed: %v", err)
	}
}

// TestWriteRefusesSymlinkOutOfTree: a symlinked directory that leads out of the root does not
// receive files (a symlinked scripts/ would otherwise get the lock file outside the tree); a
// symlink inside the tree is followed; a symlinked file is replaced, not written through.
func TestWriteRefusesSymlinkOutOfTree(t *testing.T) {
	for _, tc := range []struct {
		name, link, target string
		outside, wantErr   bool
	}{
		{"dir out of the tree", "assets/components", "", true, true},
		{"parent out of the tree", "assets", "", true, true},
		{"scripts/ out of the tree (the lock)", "scripts", "", true, true},
		{"file out of the tree", lvmsDir + "/change.yaml", "", true, false},
		{"dir inside the tree", "assets/components", "elsewhere", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := seed(t)
			outside := t.TempDir()
			target := filepath.Join(outside, "t")
			if !tc.outside {
				target = filepath.Join(root, tc.target)
			}
			live := filepath.Join(root, filepath.FromSlash(tc.link))
			if err := os.Rename(live, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, live); err != nil {
				t.Fatal(err)
			}
			beforeOut := hashTree(t, outside)
			before := hashTree(t, root)
			_, err := Write(root, want(), managed)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "symlink") {
					t.Fatalf("err = %v, want a refusal naming the symlink", err)
				}
				if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
					t.Fatalf("tree changed (-before +after):\n%s", diff)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(beforeOut, hashTree(t, outside)); diff != "" {
				t.Fatalf("wrote outside the tree (-before +after):\n%s", diff)
			}
		})
	}
}

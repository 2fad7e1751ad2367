package app

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// boundedChild runs Main in a child process (TestMainHelper) under a virtual-memory limit and
// a deadline, so that a read without bounds shows up as a failed run (out of memory, killed
// at the deadline) instead of taking the test binary, or the machine, down with it.
func boundedChild(t *testing.T, args []string) (int, string) {
	t.Helper()
	code, _, stderr := boundedChildOut(t, args)
	return code, stderr
}

// boundedChildOut is boundedChild that also returns stdout.
func boundedChildOut(t *testing.T, args []string) (int, string, string) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// 4 GiB of address space (a run reserves some 2.5) is far more than a run needs and far less than reading
	// /dev/zero to its end.
	cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -v 4194304 && exec "$@"`, "sh", os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), "LVMS_REBASE_MAIN_ARGS="+string(b))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within 3 minutes (a blocking read?)\nstderr:\n%s", stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// hostileFile replaces rel in the tree at root with one of the special files a read must
// refuse: "fifo" (a named pipe: reading it blocks), "dev-zero" (a link to /dev/zero: reading
// it never ends), "huge" (a sparse regular file one byte over the cap), "deep" (a document
// nested deeper than its parser goes, within the size cap: an object holding a million '['
// for YAML and JSON,
// 4,000 nested subshells for a shell record, whose cap is 16 KiB).
func hostileFile(t *testing.T, root, rel, kind string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "dev-zero":
		err = os.Symlink("/dev/zero", p)
	case "huge":
		var f *os.File
		if f, err = os.Create(p); err == nil {
			err = f.Truncate(16<<20 + 1)
			f.Close()
		}
	case "deep":
		deep := `{"a": ` + strings.Repeat("[", 1_000_000)
		if strings.HasSuffix(rel, ".sh") {
			deep = strings.Repeat("(\n", 4000) + "true\n" + strings.Repeat(")\n", 4000)
		}
		err = os.WriteFile(p, []byte(deep), 0o644)
	case "laughs":
		err = os.WriteFile(p, []byte(laughs), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// laughs is a YAML document whose aliases expand to 10^9 strings from under 1 KB ("a billion
// laughs"): the YAML decoders' alias budget (go.yaml.in/yaml v2 and v3 alike) refuses it.
var laughs = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}()

// TestTreeReadsAreBounded: every file a run reads from the checkout — the records, the
// release JSON, the lock, the recipes — made a FIFO, a link to /dev/zero or a file over the
// cap ends the run with exit 1 and an error naming the file and what it is, in bounded time
// and memory; nothing in the tree changes. Before the reads went through internal/safefile,
// the FIFO blocked the run until its --timeout and /dev/zero filled memory.
func TestTreeReadsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end, child processes")
	}
	files := []string{
		"scripts/auto-rebase/last_rebase.sh",        // the payload rule's record
		"assets/release/release-x86_64.json",        // the preflight
		"scripts/auto-rebase/lvms-rebase.lock.yaml", // the lock
		"scripts/auto-rebase/assets_lvms.yaml",      // a recipe
		"scripts/auto-rebase/last_rebase_lvms.sh",   // the bundle record
	}
	want := map[string]string{"fifo": "not a regular file (a named pipe (FIFO))", "dev-zero": "not a regular file (a symbolic link)", "huge": "16777217 bytes, over the 16777216-byte cap", "deep": "exceeded max depth", "laughs": "excessive aliasing"}
	e := newE2E(t)
	for _, rel := range files {
		for _, kind := range []string{"fifo", "dev-zero", "huge", "deep", "laughs"} {
			if kind == "laughs" && !strings.HasSuffix(rel, ".lock.yaml") {
				continue // JSON and shell have no aliases; a recipe's reader walks its own shape with a budget
			}
			t.Run(filepath.Base(rel)+"/"+kind, func(t *testing.T) {
				dir := copyTree(t, "../../../testdata/microshift")
				hostileFile(t, dir, rel, kind)
				before := treeState(t, dir)
				code, stderr := boundedChild(t, e.args(dir, "--ocp", "4.18", "--allow-base-mismatch", "--dry-run"))
				w := want[kind]
				if kind == "deep" && strings.HasSuffix(rel, ".sh") {
					w = "syntax nested more than 100 deep"
				}
				if code != ExitError || !strings.Contains(stderr, rel) || !strings.Contains(stderr, w) {
					t.Errorf("exit %d, want %d naming %s and %q\nstderr:\n%s", code, ExitError, rel, w, stderr)
				}
				if treeState(t, dir) != before {
					t.Error("the tree changed")
				}
			})
		}
	}
}

// treeState describes every entry under root — a regular file by its content, a link by its
// target, anything else by its type — without opening anything but regular files (treeHash
// would block on a FIFO and read /dev/zero forever).
func treeState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %x\n", rel, sum)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s -> %s\n", rel, target)
		default:
			fmt.Fprintf(&b, "%s %s\n", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBranchReadsAreBounded: a branch whose committed record is a link to /dev/zero fails on
// its own, named, in --branches and in outdated, while the other branch finishes; before,
// reading the link in the branch's worktree took the whole process (every branch) down.
func TestBranchReadsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: a clone, child processes")
	}
	setGitIdentity(t)
	e := newE2E(t)
	dir := makeClone(t)
	gitOut(t, dir, "checkout", "-q", "-b", "hostile", "release-4.22")
	hostileFile(t, dir, "scripts/auto-rebase/last_rebase.sh", "dev-zero")
	gitOut(t, dir, "add", "scripts/auto-rebase/last_rebase.sh")
	gitOut(t, dir, "commit", "-qm", "a record that is a link to /dev/zero")
	gitOut(t, dir, "checkout", "-q", "feature")
	const reason = "scripts/auto-rebase/last_rebase.sh: not a regular file (a symbolic link"
	code, out, stderr := boundedChildOut(t, e.args(dir, "--branches", "hostile,release-4.22", "--pr-body-dir", t.TempDir(), "-o", "json"))
	var rep fleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--branches: exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != ExitError || len(rep.Items) != 2 || !strings.Contains(rep.Items[0].Error, reason) || rep.Items[1].Error != "" || rep.Items[1].Commit == "" {
		t.Errorf("--branches: exit %d, want %d with hostile failed on its record and release-4.22 rebased: %+v\n%s", code, ExitError, rep, stderr)
	}
	code, out, stderr = boundedChildOut(t, e.args(dir, "outdated", "--branches", "hostile,release-4.22", "-o", "json"))
	var st outdatedReport
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("outdated: exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != ExitError || len(st.Items) != 2 || st.Items[0].Status != "error" || !strings.Contains(st.Items[0].Reason, "last_rebase.sh") || st.Items[1].Status != "outdated" {
		t.Errorf("outdated: exit %d, want %d with hostile an error naming its record and release-4.22 checked: %+v\n%s", code, ExitError, st, stderr)
	}
}

package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests here are about what a run finds in the tree from before it: directories named
// like its work directories, journals it did not write, files whose mode a person changed.
// They run the command as CI does (Main with the registry's flags); rebase/tree's own tests
// kill real writers at every step.

// TestOthersWorkDirectoriesSurvive: a person's ".lvms-rebase-notes/" and a --cache-dir kept
// in the checkout as ".lvms-rebase-cache" are named like work directories. Every run leaves
// them exactly as they are and names them; none fails over them (not even --check, which
// must not take them for a pending write). On main before this change the write run deleted
// both (the cache at every run, after the run that filled it).
func TestOthersWorkDirectoriesSurvive(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	notes := filepath.Join(dir, ".lvms-rebase-notes")
	mustMkdirAll(t, notes, 0o755)
	mustWriteFile(t, filepath.Join(notes, "todo.txt"), []byte("ask about 4.19\n"), 0o644)
	e.cache = filepath.Join(dir, ".lvms-rebase-cache")
	args := []string{"--ocp", "4.18", "--allow-base-mismatch"}
	for i, mode := range [][]string{nil, nil, {"--dry-run"}, {"--check"}} {
		run := append(append([]string(nil), args...), mode...)
		if len(mode) == 1 && mode[0] == "--check" {
			run = mode
		}
		code, out, errOut := e.run(dir, run...)
		if code != 0 {
			t.Fatalf("run %d %v: exit %d\n%s\n%s", i, mode, code, out, errOut)
		}
		if !strings.Contains(errOut, ".lvms-rebase-notes is named like an lvms-rebase work directory") || !strings.Contains(errOut, "left alone") {
			t.Errorf("run %d %v does not name the directory it left alone:\n%s", i, mode, errOut)
		}
		if b, err := os.ReadFile(filepath.Join(notes, "todo.txt")); err != nil || string(b) != "ask about 4.19\n" {
			t.Fatalf("run %d %v: the person's notes are gone: %q, %v", i, mode, b, err)
		}
		if blobs, _ := filepath.Glob(filepath.Join(e.cache, "blobs", "sha256", "*")); len(blobs) == 0 {
			t.Fatalf("run %d %v: the cache inside the checkout is gone", i, mode)
		}
	}
}

// TestHandMadeJournalTouchesNothing plants, as a person or a hostile commit could, a work
// directory with a journal (in the format lvms-rebase wrote before this change, marked
// complete) whose entries would delete Makefile and restore a planted
// .git/hooks/pre-commit — which the same run's --commit would then execute. Every mode
// refuses it naming the work directory and touches nothing. On main before this change the
// write run deleted Makefile and planted the hook.
func TestHandMadeJournalTouchesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	const makefile, hook = "all:\n\tgo build ./...\n", "#!/bin/sh\ntouch /tmp/pwned\n"
	fp := func(s string) string { sum := sha256.Sum256([]byte(s)); return "sha256:" + hex.EncodeToString(sum[:]) }
	dir := copyTree(t, "../../../testdata/microshift")
	mustWriteFile(t, filepath.Join(dir, "Makefile"), []byte(makefile), 0o644)
	mustMkdirAll(t, filepath.Join(dir, ".git", "hooks"), 0o755)
	work := filepath.Join(dir, ".lvms-rebase-424242")
	mustMkdirAll(t, filepath.Join(work, "old", ".git", "hooks"), 0o755)
	mustWriteFile(t, filepath.Join(work, "old", ".git", "hooks", "pre-commit"), []byte(hook), 0o755)
	b, _ := json.Marshal(map[string]any{"version": 2, "managed": []string{".git/hooks"}, "files": []map[string]string{
		{"path": "Makefile", "new": fp(makefile)},
		{"path": ".git/hooks/pre-commit", "old": fp(hook)},
	}})
	mustWriteFile(t, filepath.Join(work, "journal.json"), b, 0o644)
	mustWriteFile(t, filepath.Join(work, "committed"), nil, 0o644)
	before := treeHash(t, dir)
	for _, mode := range [][]string{{"--dry-run"}, {"--diff"}, {"--check"}, {}, {"--commit"}} {
		run := append([]string{"--ocp", "4.18", "--allow-base-mismatch"}, mode...)
		if len(mode) == 1 && mode[0] == "--check" {
			run = mode
		}
		code, _, errOut := e.run(dir, run...)
		if code != ExitError || !strings.Contains(errOut, "recovery touched nothing") || !strings.Contains(errOut, work) {
			t.Errorf("%v: exit %d, want %d and a refusal naming %s:\n%s", mode, code, ExitError, work, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
			t.Fatalf("%v planted .git/hooks/pre-commit", mode)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "Makefile")); err != nil || string(got) != makefile {
			t.Fatalf("%v touched Makefile: %q, %v", mode, got, err)
		}
		if treeHash(t, dir) != before {
			t.Fatalf("%v modified the tree", mode)
		}
	}
}

// TestModeOnlyHandEdit: the executable bit of the bundle record is part of what a run writes
// (MicroShift's own rebase script chmod +x's it). After a person's chmod -x, --check reports
// the file (exit 3), --diff shows the mode change as git does, and the next write run makes it
// executable again. On main before this change --check passed the tree and the write said
// "no changes".
func TestModeOnlyHandEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	const record = "scripts/auto-rebase/last_rebase_lvms.sh"
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	args := []string{"--ocp", "4.18", "--allow-base-mismatch"}
	if code, _, errOut := e.run(dir, args...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, errOut)
	}
	p := filepath.Join(dir, filepath.FromSlash(record))
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := e.run(dir, "--check"); code != ExitDrift || !strings.Contains(out+errOut, record) {
		t.Errorf("--check after chmod -x: exit %d, want %d naming %s\n%s\n%s", code, ExitDrift, record, out, errOut)
	}
	if code, out, errOut := e.run(dir, append(args, "--diff")...); code != ExitDrift ||
		!strings.Contains(out, "diff --git a/"+record+" b/"+record+"\nold mode 100644\nnew mode 100755\n") {
		t.Errorf("--diff after chmod -x: exit %d, want %d and git's mode lines\n%s\n%s", code, ExitDrift, out, errOut)
	}
	if code, _, errOut := e.run(dir, args...); code != 0 {
		t.Fatalf("write run: exit %d\n%s", code, errOut)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("record mode after the write run: %v, %v; want 0755", fi.Mode(), err)
	}
	if code, out, errOut := e.run(dir, "--check"); code != 0 {
		t.Errorf("--check after the repair: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestOutputsInsideManagedPathsRefused: an output of the run that a write replaces or
// removes — a --cache-dir inside a managed directory, a --pr-body naming the lock or a file
// in a managed directory, also through a symlink — is a usage error before any work, naming
// the flag; the tree and the cache keep every byte. On main before this change every write
// removed the cache's files as files the render lacks ("27 removed"), and a PR body was
// written over the lock after the swap.
func TestOutputsInsideManagedPathsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	for _, tc := range []struct {
		name, flag, rel string
	}{
		{"cache in a managed directory", "--cache-dir", "assets/components/lvms/.cache"},
		{"cache through a symlink", "--cache-dir", "lvms-link/.cache"},
		{"PR body over the lock", "--pr-body", "scripts/auto-rebase/lvms-rebase.lock.yaml"},
		{"PR body in a managed directory", "--pr-body", "assets/components/csi-snapshot-controller/pr.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, "../../../testdata/microshift")
			// A symlink from outside the tree into a managed directory.
			links := t.TempDir()
			if err := os.Symlink(filepath.Join(dir, "assets/components/lvms"), filepath.Join(links, "lvms-link")); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, filepath.FromSlash(tc.rel))
			if strings.HasPrefix(tc.rel, "lvms-link/") {
				out = filepath.Join(links, filepath.FromSlash(tc.rel))
			}
			run := []string{"--ocp", "4.18", "--allow-base-mismatch", tc.flag, out}
			if tc.flag == "--cache-dir" {
				mustMkdirAll(t, filepath.Join(out, "blobs"), 0o755)
				mustWriteFile(t, filepath.Join(out, "blobs", "kept"), []byte("x"), 0o644)
				e.cache = out
				run = run[:3]
			}
			before := treeHash(t, dir)
			code, _, errOut := e.run(dir, run...)
			if code != ExitUsage || !strings.Contains(errOut, tc.flag) || !strings.Contains(errOut, "every write replaces or removes") {
				t.Errorf("exit %d, want %d and an error naming %s:\n%s", code, ExitUsage, tc.flag, errOut)
			}
			if treeHash(t, dir) != before {
				t.Error("the run modified the tree")
			}
		})
	}
}

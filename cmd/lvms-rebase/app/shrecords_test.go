package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrappedSecondInvocationRefused: a second `rebase.sh to …` that bash runs through a
// wrapper, a code string, a pipe or a here-document into a shell, or a trap leaves the tree
// on other payloads than the plain one; the run is refused naming the file and the line
// before anything is fetched or written, never read as the first pair with exit 0.
func TestWrappedSecondInvocationRefused(t *testing.T) {
	e := newE2E(t)
	const lastRebase = "scripts/auto-rebase/last_rebase.sh"
	const second = "./scripts/auto-rebase/rebase.sh to quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64 quay.io/openshift-release-dev/ocp-release:5.0.1-aarch64"
	for _, tc := range []struct{ name, line, want string }{
		{"env", "env LC_ALL=C " + second, "line 3: `env` runs rebase.sh"},
		{"nohup", "nohup " + second, "line 3: `nohup` runs rebase.sh"},
		{"timeout", "timeout 2h " + second, "line 3: `timeout` runs rebase.sh"},
		{"bash -c", "bash -c '" + second + "'", "line 3: inside `bash -c`: rebase.sh to"},
		{"eval", "eval \"" + second + "\"", "line 3: inside `eval`: rebase.sh to"},
		{"pipe into bash", "echo '" + second + "' | bash", "line 3: `bash` reads its commands from standard input"},
		{"here-document into bash", "bash <<'EOF'\n" + second + "\nEOF", "line 3: `bash` reads its commands from standard input"},
		{"trap on EXIT", "trap '" + second + "' EXIT", "line 3: inside `trap`: rebase.sh to"},
		{"set -e and a failing command before it", "set -e\nfalse", "line 4: rebase.sh to may never run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
			if strings.HasPrefix(tc.name, "set -e") {
				prependLine(t, dir, lastRebase, tc.line)
			} else {
				appendText(t, dir, lastRebase, tc.line+"\n")
			}
			before := treeHash(t, dir)
			code, out, errOut := e.run(dir)
			if code != ExitError || !strings.Contains(errOut, lastRebase+": "+tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, ExitError, lastRebase+": "+tc.want, out, errOut)
			}
			if treeHash(t, dir) != before {
				t.Error("the refused run changed the tree")
			}
		})
	}
}

// TestBundleRecordKeepsItsBytes: the bundle record goes through the same reader; a run
// updates only the arguments of its command and keeps every other byte, a Latin-1 comment
// included (it was dropped before), and a second invocation through nohup is refused.
func TestBundleRecordKeepsItsBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: a whole run")
	}
	e := newE2E(t)
	const record = "scripts/auto-rebase/last_rebase_lvms.sh"
	dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
	comment := "# mis \xe0 jour par Andr\xe9 (\xa9 2026)"
	prependLine(t, dir, record, comment)
	if code, out, errOut := e.run(dir); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got := readFile(t, dir, record)
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[0] != "#!/bin/bash -x" || lines[1] != comment ||
		!strings.HasPrefix(lines[2], "./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v") {
		t.Fatalf("%s after the run:\n%q", record, got)
	}

	dir = copyTree(t, filepath.Join(treesRoot, "5.0"))
	appendText(t, dir, record, "nohup ./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.19.0\"\n")
	before := treeHash(t, dir)
	if code, _, errOut := e.run(dir); code != ExitError || !strings.Contains(errOut, record+": line 3: `nohup` runs rebase_lvms.sh") {
		t.Fatalf("exit %d, want %d naming %s line 3\n%s", code, ExitError, record, errOut)
	}
	if treeHash(t, dir) != before {
		t.Error("the refused run changed the tree")
	}
}

// TestOutdatedDeepRecord: a last_rebase.sh nested a million subshells deep (a fatal stack
// overflow of the parser before) is one branch's error naming the file; the process lives
// and the other branch is checked.
func TestOutdatedDeepRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a git clone")
	}
	e := newE2E(t)
	dir := makeClone(t)
	wt := filepath.Join(t.TempDir(), "deep")
	gitOut(t, dir, "worktree", "add", "-q", "-b", "deep", wt, "main")
	deep := strings.Repeat("(", 1_000_000) + "true" + strings.Repeat(")", 1_000_000) + "\n"
	if err := os.WriteFile(filepath.Join(wt, "scripts/auto-rebase/last_rebase.sh"), []byte(deep), 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, wt, "commit", "-qam", "a deep record")
	gitOut(t, dir, "worktree", "remove", wt)
	code, rep, errOut := e.outdated(t, dir, "--branches", "deep,main")
	if code != ExitError || len(rep.Items) != 2 {
		t.Fatalf("exit %d, want %d with both branches reported: %+v\n%s", code, ExitError, rep, errOut)
	}
	if it := rep.Items[0]; it.Status != "error" || !strings.Contains(it.Reason, "scripts/auto-rebase/last_rebase.sh") || !strings.Contains(it.Reason, "at most") {
		t.Errorf("deep: %+v, want an error naming last_rebase.sh and its size cap", it)
	}
	if it := rep.Items[1]; it.Status != "outdated" {
		t.Errorf("main: %+v, want it checked (outdated)", it)
	}
}

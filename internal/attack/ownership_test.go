package attack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTreeOwnership attacks what a write may delete or overwrite in the tree (principle 3):
// directories named like its work directory that a person made, a cache kept in the
// checkout, a journal edited by hand to reach outside the managed paths, a person's
// uncommitted work, a mode-only edit.
func TestTreeOwnership(t *testing.T) {
	skipShort(t)
	rows := []row{
		{name: "check/colliding/a mode-only edit of a managed file", class: colliding, mode: modeRead, tpl: tplRebased,
			setup: func(t *testing.T, w *world) { chmod(t, w, operatorFile, 0o755) },
			args:  func(w *world) []string { return w.rebase("--check") }, want: exitDrift},
		{name: "write/colliding/a mode-only edit of a managed file", class: colliding, mode: modeWrite, tpl: tplRebased,
			setup: func(t *testing.T, w *world) { chmod(t, w, operatorFile, 0o755) },
			args:  func(w *world) []string { return w.rebase() }, want: exitOK},
	}
	for _, m := range []struct {
		name string
		args []string
		mode mode
	}{{"write", nil, modeWrite}, {"commit", []string{"--commit"}, modeCommit}, {"dry-run", []string{"--dry-run"}, modeRead}} {
		for _, j := range handJournals {
			rows = append(rows, row{
				name: m.name + "/colliding/a journal edited to " + j.name, class: colliding, mode: m.mode, tpl: tplFresh,
				setup: func(t *testing.T, w *world) { plantJournal(t, w, j.entry) },
				args:  func(w *world) []string { return w.rebase(m.args...) }, want: exitError, names: []string{".lvms-rebase-"},
			})
		}
	}
	// Every writing mode meets every threat: the checkout's (write, --commit) and a branch's
	// (--branches, which must also leave the checkout alone).
	for _, th := range treeThreats {
		for _, m := range []struct {
			name string
			args []string
			mode mode
		}{{"write", nil, modeWrite}, {"commit", []string{"--commit"}, modeCommit}} {
			rows = append(rows, row{name: m.name + "/" + string(th.class) + "/" + th.name, class: th.class, mode: m.mode, tpl: tplFresh,
				setup: th.setup, args: func(w *world) []string { return w.rebase(m.args...) }, want: th.want, names: th.names})
		}
		rows = append(rows, row{name: "branches/" + string(th.class) + "/" + th.name, class: th.class, mode: modeFleet, tpl: tplClone,
			setup: func(t *testing.T, w *world) {
				th.setup(t, w)
				if th.inBranch {
					gitT(t, w.tree, "add", "-A")
					gitT(t, w.tree, "commit", "-qm", "the person's "+th.name)
				}
			},
			// A branch's error is its line on stdout; the one Error line names the branch.
			args: func(w *world) []string { return fleet(w, "main") }, want: th.want, names: []string{"main"},
			after: func(t *testing.T, w *world, res result) {
				says(th.names...)(t, w, res)
				if th.inBranch && res.code == exitOK {
					keptInBranch(t, w, "lvms-rebase/main", th.kept...)
				}
			}})
	}
	for _, j := range handJournals {
		rows = append(rows, row{name: "branches/colliding/the checkout's journal edited to " + j.name, class: colliding, mode: modeFleet, tpl: tplClone,
			setup: func(t *testing.T, w *world) { plantJournal(t, w, j.entry) },
			args:  func(w *world) []string { return fleet(w, "main") }, want: exitOK})
	}
	runRows(t, rows)
}

// treeThreat is something of a person's in the tree, named or placed where a write works,
// attacked in every writing mode. inBranch: for --branches it is committed to the branch
// (else it stays in the checkout, which --branches must not touch); kept are paths the
// result branch must still hold.
type treeThreat struct {
	name     string
	class    class
	setup    func(t *testing.T, w *world)
	want     int
	names    []string
	inBranch bool
	kept     []string
}

var treeThreats = []treeThreat{
	{name: "a person's .lvms-rebase-notes directory", class: colliding, want: exitOK, inBranch: true, kept: []string{".lvms-rebase-notes/todo.txt"},
		setup: func(t *testing.T, w *world) { put(t, w.tree, ".lvms-rebase-notes/todo.txt", "ask about 4.19\n", 0o644) }},
	{name: "--cache-dir kept in the checkout", class: colliding, want: exitOK, setup: cacheInTree},
	// A link named like a work directory, to a directory outside that looks like a killed
	// run's: nothing proves it the tree's, so neither it nor what it points at is touched.
	{name: "a work directory linked out of the tree", class: special, want: exitOK, inBranch: true, kept: []string{".lvms-rebase-old"},
		setup: func(t *testing.T, w *world) {
			put(t, w.in, "victim/journal.json", `{"version":3,"files":[]}`+"\n", 0o644)
			put(t, w.in, "victim/committed", "", 0o644)
			put(t, w.in, "victim/new/Makefile", "all:\n", 0o644)
			link(t, w.tree, ".lvms-rebase-old", filepath.Join(w.in, "victim"))
		}},
	// Two paths that differ only in case are one file on macOS: the person's committed
	// variant of a file the write produces is a file the era neither writes nor retires,
	// refused naming it (the branch's files are the authority), never silently replaced.
	{name: "a file differing only in case from one the write produces", class: colliding, want: exitError,
		names: []string{"assets/components/lvms/LVMS-Operator_apps_v1_deployment.yaml"},
		setup: func(t *testing.T, w *world) {
			put(t, w.tree, "assets/components/lvms/LVMS-Operator_apps_v1_deployment.yaml", "kind: Deployment\n", 0o644)
			gitT(t, w.tree, "add", "-A")
			gitT(t, w.tree, "commit", "-qm", "a case variant")
		}},
}

// keptInBranch: the result branch still holds each path (the person's, committed to the branch).
func keptInBranch(t *testing.T, w *world, ref string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := gitOutput(w.tree, "cat-file", "-e", ref+":"+p); err != nil {
			t.Errorf("invariant 3: %s lost the person's %s", ref, p)
		}
	}
}

func chmod(t *testing.T, w *world, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(w.tree, rel), mode); err != nil {
		t.Fatal(err)
	}
}

// cacheInTree moves the row's image cache into the checkout, named like a work directory,
// with a blob of another image that this run does not fetch again: a run that deletes the
// cache and fetches anew loses that one.
func cacheInTree(t *testing.T, w *world) {
	t.Helper()
	in := filepath.Join(w.tree, ".lvms-rebase-cache")
	if err := os.Rename(w.cache, in); err != nil {
		t.Fatal(err)
	}
	blob := "a layer of another image\n"
	put(t, in, "blobs/sha256/"+sum([]byte(blob)), blob, 0o644)
	w.cache = in
}

// handJournals are entries a person (or an attacker) adds to the journal of a killed run:
// each names a path no write produces.
var handJournals = []struct {
	name  string
	entry func(t *testing.T, w *world, work string) map[string]any
}{
	{"delete Makefile", func(t *testing.T, w *world, _ string) map[string]any {
		data := put(t, w.tree, "Makefile", "all:\n\ttrue\n", 0o644)
		return map[string]any{"path": "Makefile", "old": fingerprint(t, data), "oldMode": "0644"}
	}},
	{"plant .git/hooks/pre-commit", func(t *testing.T, w *world, work string) map[string]any {
		staged := put(t, work, "new/.git/hooks/pre-commit", "#!/bin/sh\ntouch "+filepath.Join(w.in, "pwned")+"\n", 0o755)
		return map[string]any{"path": ".git/hooks/pre-commit", "new": fingerprint(t, staged), "newMode": "0755"}
	}},
	{"replace .git/config", func(t *testing.T, w *world, work string) map[string]any {
		old := filepath.Join(w.tree, ".git/config")
		staged := put(t, work, "new/.git/config", "[core]\n\tfsmonitor = touch "+filepath.Join(w.in, "pwned")+"\n", 0o644)
		return map[string]any{"path": ".git/config", "old": fingerprint(t, old), "oldMode": "0644", "new": fingerprint(t, staged), "newMode": "0644"}
	}},
	{"create a file outside the tree", func(t *testing.T, w *world, work string) map[string]any {
		staged := put(t, work, "new/escaped", "outside\n", 0o644)
		return map[string]any{"path": "../escaped", "new": fingerprint(t, staged), "newMode": "0644"}
	}},
	{"replace a file beside the managed ones", func(t *testing.T, w *world, work string) map[string]any {
		old := filepath.Join(w.tree, "assets/components/ovn/namespace.yaml")
		staged := put(t, work, "new/assets/components/ovn/namespace.yaml", "kind: Namespace\n", 0o644)
		return map[string]any{"path": "assets/components/ovn/namespace.yaml", "old": fingerprint(t, old), "oldMode": "0644",
			"new": fingerprint(t, staged), "newMode": "0644"}
	}},
}

func fingerprint(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return "sha256:" + sum(b)
}

// plantJournal kills a real write after its journal (at its first backup), then adds the
// entry to the journal it left and marks the swap committed, so that recovery would roll it
// forward.
func plantJournal(t *testing.T, w *world, entry func(t *testing.T, w *world, work string) map[string]any) {
	t.Helper()
	res := runProc(proc{args: w.rebase(), env: childEnv(w.home, "TMPDIR="+w.tmp, "LVMS_REBASE_PAUSE_AT=backup "), dir: w.root,
		when: &trigger{at: "failpoint: paused at backup ", sig: syscall.SIGKILL}})
	if !res.fired {
		t.Fatalf("the write to kill never reached its first backup (exit %d):\n%s", res.code, res.stderr)
	}
	works, _ := filepath.Glob(filepath.Join(w.tree, ".lvms-rebase-*"))
	if len(works) != 1 {
		t.Fatalf("the killed write left %d work directories: %v", len(works), works)
	}
	jpath := filepath.Join(works[0], "journal.json")
	var j map[string]any
	if err := json.Unmarshal([]byte(read(t, jpath)), &j); err != nil {
		t.Fatalf("the journal of a killed write: %v", err)
	}
	files, _ := j["files"].([]any)
	j["files"] = append(files, entry(t, w, works[0]))
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	put(t, works[0], "journal.json", string(b), 0o644)
	put(t, works[0], "committed", "", 0o644)
	if strings.Contains(read(t, jpath), `"path":""`) {
		t.Fatal("planted an empty path")
	}
}

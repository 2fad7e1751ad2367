package tree

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const recipe = "scripts/auto-rebase/assets.yaml"

// failMarkerFsync makes the helper's Write fail as when the fsync after the commit marker
// fails (the marker file is on disk, the call returns an error) and pauses the rollback that
// follows at its restore number at, for the parent's SIGKILL. With keepMarker the marker is
// on disk when the process dies (its removal was lost with the crash). The write includes a
// changed recipe, as a real run's does.
func failMarkerFsync(at int, keepMarker bool) map[string][]byte {
	writeFileFn = func(name string, data []byte, perm fs.FileMode) error {
		if err := writeFileSync(name, data, perm); err != nil || filepath.Base(name) != committedName {
			return err
		}
		return errors.New("injected: fsync after the commit marker failed")
	}
	restores := 0
	renameFn = func(from, to string) error {
		if strings.Contains(from, workPrefix) && strings.Contains(filepath.ToSlash(from), "/old/") {
			if restores == at {
				if keepMarker {
					work := from[:strings.Index(filepath.ToSlash(from), "/old/")]
					_ = os.WriteFile(filepath.Join(work, committedName), nil, 0o644)
				}
				pause(fmt.Sprint("restore ", restores))
			}
			restores++
		}
		return os.Rename(from, to)
	}
	files := want()
	files[recipe] = []byte("assets:\n  - dir: components/lvms/\n    files: [new]\n")
	return files
}

// seedWithRecipe is seed plus the recipe failMarkerFsync's write changes.
func seedWithRecipe(t *testing.T) string {
	root := seed(t)
	if err := os.WriteFile(filepath.Join(root, recipe), []byte("assets:\n  - dir: components/lvms/\n    files: [old]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestRecoverAfterFailedMarkerFsync: the fsync after the commit marker fails, the writer
// rolls back and is killed (SIGKILL, a real process) in the middle of that rollback, with
// the marker gone or still on disk. The next run must roll back, never forward: the release
// JSON, the lock and the recipe are all back, byte for byte.
func TestRecoverAfterFailedMarkerFsync(t *testing.T) {
	for _, mode := range []string{"marker-removed", "marker-kept"} {
		for _, at := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s restore %d", mode, at), func(t *testing.T) {
				root := seedWithRecipe(t)
				before := hashTree(t, root)
				killAt(t, root, at, "TREE_KILL_MODE="+mode)
				recs, err := Recover(root, scope)
				if err != nil {
					t.Fatalf("Recover: %v", err)
				}
				if len(recs) != 1 || recs[0].Action != "rolled back" {
					t.Fatalf("recoveries %+v, want one rolled back", recs)
				}
				if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
					t.Fatalf("tree differs from before the killed run (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// TestRecoverKeepsHandEdit kills a real writer (SIGKILL) at every step of the swap, then a
// person edits a file the write covers before the next run. The edit survives recovery; the
// conflict is reported by path with what to do, the work directory (with the backup) is
// kept; every other file is rolled back or forward as usual; Pending reports the same
// without touching anything. Once the person removes the work directory, a write succeeds.
func TestRecoverKeepsHandEdit(t *testing.T) {
	const edited = lvmsDir + "/change.yaml"
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
			if err := os.WriteFile(filepath.Join(root, edited), []byte("kind: B\nfixed: by hand\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			pending := assertPendingReadOnly(t, root)
			recs, err := Recover(root, scope)
			if got, _ := os.ReadFile(filepath.Join(root, edited)); string(got) != "kind: B\nfixed: by hand\n" {
				t.Fatalf("the hand edit was overwritten: %q (recover: %+v, %v)", got, recs, err)
			}
			if len(recs) != 1 || len(pending) != 1 || pending[0].Action != recs[0].Action {
				t.Fatalf("Pending %+v, Recover %+v", pending, recs)
			}
			if recs[0].Action == "discarded" {
				if err != nil {
					t.Fatalf("discarding a staging: %v", err)
				}
				return // the tree was never touched
			}
			if !errors.Is(err, ErrRecoveryConflict) || !strings.Contains(err.Error(), edited+": changed since the interrupted write") ||
				!strings.Contains(err.Error(), "then remove "+filepath.Join(root, recs[0].Dir)) {
				t.Fatalf("err = %v, want a conflict naming %s and what to do", err, edited)
			}
			if len(pending[0].Conflicts) != 1 || pending[0].Conflicts[0].Path != edited {
				t.Fatalf("Pending conflicts %+v", pending[0].Conflicts)
			}
			exp := before
			if recs[0].Action == "rolled forward" {
				exp = wantAfter
			}
			if diff := cmp.Diff(outsideWork(exp, edited), outsideWork(hashTree(t, root), edited)); diff != "" {
				t.Fatalf("%s: other files (-want +got):\n%s", recs[0].Action, diff)
			}
			// Idempotent: the next run reports the same conflict and changes nothing.
			again := hashTree(t, root)
			if _, err := Recover(root, scope); !errors.Is(err, ErrRecoveryConflict) {
				t.Fatalf("second recovery: %v", err)
			}
			if diff := cmp.Diff(again, hashTree(t, root)); diff != "" {
				t.Fatalf("second recovery changed the tree (-before +after):\n%s", diff)
			}
			if err := os.RemoveAll(filepath.Join(root, recs[0].Dir)); err != nil {
				t.Fatal(err)
			}
			if _, err := Write(root, want(), managed); err != nil {
				t.Fatalf("write after resolving: %v", err)
			}
		})
	}
}

// outsideWork drops the work directory and skip from a hashTree map.
func outsideWork(m map[string]string, skip string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, workPrefix) && k != skip {
			out[k] = v
		}
	}
	return out
}

// assertPendingReadOnly calls Pending and fails when it changed anything (the work
// directory included).
func assertPendingReadOnly(t *testing.T, root string) []Recovery {
	t.Helper()
	h := hashTree(t, root)
	recs, err := Pending(root, scope)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	if diff := cmp.Diff(h, hashTree(t, root)); diff != "" {
		t.Fatalf("Pending modified the tree (-before +after):\n%s", diff)
	}
	return recs
}

// TestRecoverRefusesJournalOutsideTree plants journals whose entries lead out of the tree
// (in the format written today and in the one earlier versions wrote), and requires both
// Recover and Pending to refuse them with an error naming the journal and to touch nothing,
// inside the tree or out of it: not even a file whose bytes match the journal's fingerprint.
// Today's journals carry the work directory's true owner, so that what is refused is the
// entries (TestRecoverRefusesPathsNoWriteProduces: the paths inside the tree no write
// produces; TestRecoverLeavesDirectoriesItDidNotMake: the proof itself).
func TestRecoverRefusesJournalOutsideTree(t *testing.T) {
	const victim = "precious data\n"
	sum := sha256.Sum256([]byte(victim))
	fp := "sha256:" + hex.EncodeToString(sum[:])
	other := sha256.Sum256([]byte("planted\n"))
	otherFP := "sha256:" + hex.EncodeToString(other[:])
	for _, tc := range []struct {
		name    string
		journal func(outside string) any
		plant   func(t *testing.T, work, outside string) // backups or symlinks in the work directory
		want    string
	}{
		{"v1 add ../", func(string) any { return map[string]any{"add": []string{"../outside/victim"}} }, nil, `unknown field "add"`},
		{"v1 remove ../ with a planted backup", func(string) any { return map[string]any{"remove": []string{"../outside/victim"}} }, plantBackup, `unknown field "remove"`},
		{"v1 dirs ../", func(string) any {
			return map[string]any{"add": []string{"x/y"}, "dirs": []string{"../outside/emptydir"}}
		}, nil, `unknown field "add"`},
		{"add ../ matching the victim", func(string) any {
			return journal{Version: journalVersion, Files: []entry{{Path: "../outside/victim", New: fp}}}
		}, nil, `journal entry "../outside/victim": expected a clean, relative`},
		{"absolute path", func(outside string) any {
			return journal{Version: journalVersion, Files: []entry{{Path: outside + "/victim", New: fp}}}
		}, nil, "expected a clean, relative"},
		{"remove ../ with a planted backup", func(string) any {
			return journal{Version: journalVersion, Managed: []string{".."}, Files: []entry{{Path: "../outside/victim", Old: otherFP}}}
		}, plantBackup, `journal entry "../outside/victim": expected a clean, relative`},
		{"through a symlinked directory", func(string) any {
			return journal{Version: journalVersion, Files: []entry{{Path: "link/victim", New: fp, NewMode: "0644"}}}
		}, nil, "leads through the symlink"},
		{"created directory ../", func(string) any {
			return journal{Version: journalVersion, Files: []entry{{Path: "m/y", New: fp, NewMode: "0644"}}, Dirs: []string{"../outside/emptydir"}}
		}, nil, `journal directory "../outside/emptydir"`},
		{"backup through a symlink", func(string) any {
			return journal{Version: journalVersion, Managed: []string{"m"}, Files: []entry{{Path: "m/victim", Old: fp, OldMode: "0644"}}}
		}, func(t *testing.T, work, outside string) {
			if err := os.MkdirAll(filepath.Join(work, "old"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(work, "old", "m")); err != nil {
				t.Fatal(err)
			}
		}, "leads through the symlink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			root, outside := filepath.Join(parent, "tree"), filepath.Join(parent, "outside")
			for _, d := range []string{root + "/m", outside + "/emptydir"} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "victim"), []byte(victim), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(root, workPrefix+"planted")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.plant != nil {
				tc.plant(t, work, outside)
			}
			j := tc.journal(outside)
			if v3, ok := j.(journal); ok {
				v3.Owner = ownerFor(t, root, work) // past the ownership proof: the entries are tested
				j = v3
			}
			b, _ := json.Marshal(j)
			if err := os.WriteFile(filepath.Join(work, journalName), b, 0o644); err != nil {
				t.Fatal(err)
			}
			before, beforeOut := hashTree(t, root), hashTree(t, outside)
			for name, f := range map[string]func(string, Scope) ([]Recovery, error){"Pending": Pending, "Recover": Recover} {
				_, err := f(root, Scope{Dirs: []string{"m", "link"}})
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "recovery touched nothing") {
					t.Errorf("%s: err = %v, want a refusal mentioning %q", name, err, tc.want)
				}
				if diff := cmp.Diff(beforeOut, hashTree(t, outside)); diff != "" {
					t.Fatalf("%s touched files outside the tree (-before +after):\n%s", name, diff)
				}
				if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
					t.Fatalf("%s touched the tree (-before +after):\n%s", name, diff)
				}
			}
		})
	}
}

// plantBackup puts a "backup" where a journal entry ../outside/victim would find it
// (old/../outside/victim), so that a recovery restoring it would overwrite the victim.
func plantBackup(t *testing.T, work, _ string) {
	p := filepath.Join(work, "outside", "victim")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("planted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

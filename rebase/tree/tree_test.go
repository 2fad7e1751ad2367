package tree

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	lvmsDir = "assets/components/lvms"
	snapDir = "assets/components/csi-snapshot-controller"
)

var managed = []string{snapDir, lvmsDir}

// scope is every path the tests' writes produce (a rebase's is wider: rebase.treeScope).
var scope = Scope{Dirs: managed, Files: []string{
	"assets/release/release-x86_64.json", "scripts/auto-rebase/lvms-rebase.lock.yaml",
	"scripts/auto-rebase/assets.yaml", "scripts/auto-rebase/last_rebase_lvms.sh",
}}

// seed lays out a small MicroShift-like checkout.
func seed(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		lvmsDir + "/keep.yaml":                      "kind: A\n",
		lvmsDir + "/change.yaml":                    "kind: B\nold: 1\n",
		lvmsDir + "/stale.yaml":                     "kind: Stale\n",
		lvmsDir + "/nested/stale.yaml":              "kind: Nested\n",
		snapDir + "/clusterrole.yaml":               "kind: ClusterRole\n",
		"assets/release/release-x86_64.json":        "{\"images\": {}}\n",
		"assets/components/other/untouched.yaml":    "kind: NotOurs\n",
		"pkg/unrelated.go":                          "package pkg\n",
		"scripts/auto-rebase/lvms-rebase.lock.yaml": "old: lock\n",
	}
	for p, s := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A non-default mode that Write must keep.
	if err := os.Chmod(filepath.Join(root, lvmsDir, "change.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

func want() map[string][]byte {
	return map[string][]byte{
		lvmsDir + "/keep.yaml":                      []byte("kind: A\n"),
		lvmsDir + "/change.yaml":                    []byte("kind: B\nnew: 2\n"),
		lvmsDir + "/added.yaml":                     []byte("kind: New\n"),
		snapDir + "/clusterrole.yaml":               []byte("kind: ClusterRole\n"),
		snapDir + "/webhook/new-subdir.yaml":        []byte("kind: Deep\n"),
		"assets/release/release-x86_64.json":        []byte("{\"images\": {\"a\": \"b\"}}\n"),
		"scripts/auto-rebase/lvms-rebase.lock.yaml": []byte("new: lock\n"),
	}
}

// hashTree records every path under root with its type, mode and content hash.
func hashTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			m[rel] = "dir " + fi.Mode().String()
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			m[rel] = "link " + target
			return err
		}
		if !d.Type().IsRegular() {
			m[rel] = "special " + fi.Mode().String() // never opened: a FIFO would block
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[rel] = fmt.Sprintf("%s %x", fi.Mode(), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCompute(t *testing.T) {
	root := seed(t)
	p, err := Compute(root, want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	exp := &Changes{
		Add: []string{snapDir + "/webhook/new-subdir.yaml", lvmsDir + "/added.yaml"},
		Change: []string{"assets/release/release-x86_64.json", lvmsDir + "/change.yaml",
			"scripts/auto-rebase/lvms-rebase.lock.yaml"},
		Remove:    []string{lvmsDir + "/nested/stale.yaml", lvmsDir + "/stale.yaml"},
		Unchanged: []string{snapDir + "/clusterrole.yaml", lvmsDir + "/keep.yaml"},
	}
	for _, l := range [][]string{exp.Add, exp.Change, exp.Remove, exp.Unchanged} {
		sort.Strings(l)
	}
	if diff := cmp.Diff(exp, p); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	if !p.Changed() {
		t.Error("Changed() = false")
	}
}

func TestComputeMissingManagedDir(t *testing.T) {
	root := t.TempDir()
	p, err := Compute(root, map[string][]byte{lvmsDir + "/a.yaml": []byte("a\n")}, managed)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Add, []string{lvmsDir + "/a.yaml"}) || len(p.Remove) != 0 {
		t.Fatalf("changes %+v", p)
	}
}

func TestWrite(t *testing.T) {
	root := seed(t)
	before := hashTree(t, root)
	p, err := Write(root, want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Add) != 2 || len(p.Change) != 3 || len(p.Remove) != 2 {
		t.Fatalf("changes %+v", p)
	}
	after := hashTree(t, root)
	// Exactly the wanted files, plus untouched outside paths.
	for rel, data := range want() {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || string(got) != string(data) {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, data)
		}
	}
	for _, rel := range []string{"assets/components/other/untouched.yaml", "pkg/unrelated.go"} {
		if before[rel] != after[rel] {
			t.Errorf("%s was touched", rel)
		}
	}
	if _, ok := after[lvmsDir+"/nested"]; ok {
		t.Errorf("emptied directory %s/nested not pruned", lvmsDir)
	}
	if _, ok := after[lvmsDir]; !ok {
		t.Errorf("managed directory %s removed", lvmsDir)
	}
	for _, rel := range []string{lvmsDir + "/stale.yaml", lvmsDir + "/nested/stale.yaml"} {
		if _, ok := after[rel]; ok {
			t.Errorf("%s not removed", rel)
		}
	}
	for rel := range after {
		if strings.HasPrefix(rel, ".lvms-rebase-") {
			t.Errorf("work directory %s left behind", rel)
		}
	}
	// Modes: kept for changed files, 0644 for new ones.
	if fi, _ := os.Stat(filepath.Join(root, lvmsDir, "change.yaml")); fi.Mode().Perm() != 0o600 {
		t.Errorf("change.yaml mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(root, lvmsDir, "added.yaml")); fi.Mode().Perm() != 0o644 {
		t.Errorf("added.yaml mode %v, want 0644", fi.Mode().Perm())
	}

	// Second run: nothing to do, no mtime changes.
	mtimes := map[string]time.Time{}
	for rel := range want() {
		fi, _ := os.Stat(filepath.Join(root, rel))
		mtimes[rel] = fi.ModTime()
	}
	time.Sleep(20 * time.Millisecond)
	p2, err := Write(root, want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	if p2.Changed() || len(p2.Unchanged) != len(want()) {
		t.Fatalf("second changes %+v", p2)
	}
	for rel, mt := range mtimes {
		fi, _ := os.Stat(filepath.Join(root, rel))
		if !fi.ModTime().Equal(mt) {
			t.Errorf("%s mtime changed on a no-op write", rel)
		}
	}
	if diff := cmp.Diff(after, hashTree(t, root)); diff != "" {
		t.Errorf("no-op write changed the tree (-before +after):\n%s", diff)
	}
}

// failAt makes only the n-th call (0-based) of a hooked function fail, so that the
// rollback itself can proceed.
func failAt(n int) func() error {
	calls := 0
	return func() error {
		calls++
		if calls == n+1 {
			return errors.New("injected failure")
		}
		return nil
	}
}

// TestWriteRenameFailure fails the swap at every rename and requires a byte-identical tree.
// TestWriteNewFileModes: a new script is executable, other new files are 0644, and an
// existing file keeps its permission bits except the executable bit, which follows its
// content (a "#!" script is executable: 0600 becomes 0700).
func TestWriteNewFileModes(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scripts", "kept.sh"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"scripts/last_rebase_lvms.sh": []byte("#!/bin/bash -x\necho\n"),
		"scripts/kept.sh":             []byte("#!/bin/sh\n"),
		"scripts/data.yaml":           []byte("a: 1\n"),
	}
	if _, err := Write(root, files, nil); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]os.FileMode{"scripts/last_rebase_lvms.sh": 0o755, "scripts/kept.sh": 0o700, "scripts/data.yaml": 0o644} {
		fi, err := os.Stat(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want)
		}
	}
}

func TestWriteRenameFailure(t *testing.T) {
	defer func() { renameFn = os.Rename }()
	// Every rename of the swap: changes and removes moved aside, adds and changes placed.
	probe := seed(t)
	p, err := Compute(probe, want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	total := len(p.Change) + len(p.Remove) + len(p.Add) + len(p.Change)
	for n := 0; n < total; n++ {
		t.Run(fmt.Sprint("fail at rename ", n), func(t *testing.T) {
			root := seed(t)
			before := hashTree(t, root)
			fail := failAt(n)
			renameFn = func(a, b string) error {
				if err := fail(); err != nil {
					return err
				}
				return os.Rename(a, b)
			}
			_, err := Write(root, want(), managed)
			renameFn = os.Rename
			if err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("err = %v, want injected failure", err)
			}
			if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
				t.Fatalf("tree changed after failed write (-before +after):\n%s", diff)
			}
		})
	}
}

// TestWriteStagingFailure fails staging at each staged file's write and fsync, and at the
// journal's write, and requires a byte-identical tree.
func TestWriteStagingFailure(t *testing.T) {
	defer func() { stageFileFn, syncFn, writeFileFn = os.WriteFile, (*os.File).Sync, writeFileSync }()
	for _, tc := range []struct {
		hook string
		n    int
	}{
		{"write", 0}, {"write", 1}, {"write", 2},
		{"sync", 0}, {"sync", 1}, {"sync", 2},
		{"journal", 0},
	} {
		t.Run(fmt.Sprintf("fail at %s %d", tc.hook, tc.n), func(t *testing.T) {
			root := seed(t)
			before := hashTree(t, root)
			injectStagingFailure(tc.hook, failAt(tc.n))
			_, err := Write(root, want(), managed)
			stageFileFn, syncFn, writeFileFn = os.WriteFile, (*os.File).Sync, writeFileSync
			if err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Write: %v, want the injected failure", err)
			}
			if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
				t.Fatalf("tree changed after failed write (-before +after):\n%s", diff)
			}
		})
	}
}

func injectStagingFailure(hook string, fail func() error) {
	var mu sync.Mutex // the staged files are synced concurrently
	switch hook {
	case "write":
		stageFileFn = func(p string, b []byte, m fs.FileMode) error {
			if err := fail(); err != nil {
				return err
			}
			return os.WriteFile(p, b, m)
		}
	case "sync":
		syncFn = func(f *os.File) error {
			mu.Lock()
			err := fail()
			mu.Unlock()
			if err != nil {
				return err
			}
			return f.Sync()
		}
	case "journal":
		writeFileFn = func(p string, b []byte, m fs.FileMode) error {
			if err := fail(); err != nil {
				return err
			}
			return writeFileSync(p, b, m)
		}
	}
}

// TestStagedFilesSyncedBeforeJournal: the journal, which makes the swap go forward after a
// crash, is written only once every staged file is durable.
func TestStagedFilesSyncedBeforeJournal(t *testing.T) {
	defer func() { syncFn, writeFileFn = (*os.File).Sync, writeFileSync }()
	var mu sync.Mutex
	synced := map[string]bool{}
	syncFn = func(f *os.File) error {
		mu.Lock()
		synced[f.Name()] = true
		mu.Unlock()
		return f.Sync()
	}
	var missing []string
	writeFileFn = func(p string, b []byte, m fs.FileMode) error {
		if filepath.Base(p) == journalName {
			missing = unsyncedStaged(t, filepath.Join(filepath.Dir(p), "new"), synced)
		}
		return writeFileSync(p, b, m)
	}
	p, err := Write(seed(t), want(), managed)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Add)+len(p.Change) == 0 {
		t.Fatal("the write staged nothing; the test proves nothing")
	}
	if len(missing) > 0 {
		t.Fatalf("journal written before these staged files were synced: %v", missing)
	}
}

func unsyncedStaged(t *testing.T, newDir string, synced map[string]bool) []string {
	var missing []string
	err := filepath.WalkDir(newDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !synced[p] {
			missing = append(missing, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return missing
}

// TestWriteUnwritableTarget makes a target directory impossible to create (a file sits
// where the directory must go); the real OS error must leave the tree unchanged.
func TestWriteUnwritableTarget(t *testing.T) {
	root := seed(t)
	if err := os.WriteFile(filepath.Join(root, "assets/zblocked"), []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, root)
	files := want()
	// Sorted after the other adds, so the backups and two placed files must be undone.
	files["assets/zblocked/sub/x.yaml"] = []byte("x\n")
	_, err := Write(root, files, managed)
	if err == nil || !strings.Contains(err.Error(), "assets/zblocked/sub/x.yaml") {
		t.Fatalf("err = %v, want one naming the blocked path", err)
	}
	if diff := cmp.Diff(before, hashTree(t, root)); diff != "" {
		t.Fatalf("tree changed after failed write (-before +after):\n%s", diff)
	}
}

// TestWriteAbsentRoot: a tree that does not exist is named, and nothing is written.
func TestWriteAbsentRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "absent")
	_, err := Write(root, want(), managed)
	if err == nil || !strings.Contains(err.Error(), "the tree "+root) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("root created: %v", err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string][]byte
		dirs    []string
		wantErr string
	}{
		{"absolute", map[string][]byte{"/etc/passwd": nil}, nil, "clean, relative"},
		{"escape", map[string][]byte{"../x": nil}, nil, "clean, relative"},
		{"unclean", map[string][]byte{"a//b": nil}, nil, "clean, relative"},
		{"backslash", map[string][]byte{`a\b`: nil}, nil, "clean, relative"},
		{"managed escape", nil, []string{"../assets"}, "managed directory"},
		{"reserved", map[string][]byte{".lvms-rebase-x/a": nil}, nil, "reserved"},
		{"file is parent", map[string][]byte{"a": nil, "a/b": nil}, nil, "parent directory"},
		{"file is managed dir", map[string][]byte{lvmsDir: nil}, managed, "managed directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range []func() error{
				func() error { _, err := Compute(root, tc.files, tc.dirs); return err },
				func() error { _, err := Write(root, tc.files, tc.dirs); return err },
				func() error { _, err := Diff(root, tc.files, tc.dirs); return err },
			} {
				if err := f(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			}
		})
	}
}

func TestDiff(t *testing.T) {
	root := seed(t)
	files := map[string][]byte{
		lvmsDir + "/keep.yaml":        []byte("kind: A\n"),
		lvmsDir + "/change.yaml":      []byte("kind: B\nnew: 2\n"),
		lvmsDir + "/added.yaml":       []byte("kind: New\n"),
		snapDir + "/clusterrole.yaml": []byte("kind: ClusterRole\n"),
	}
	got, err := Diff(root, files, []string{lvmsDir})
	if err != nil {
		t.Fatal(err)
	}
	want := `diff --git a/assets/components/lvms/added.yaml b/assets/components/lvms/added.yaml
new file mode 100644
--- /dev/null
+++ b/assets/components/lvms/added.yaml
@@ -0,0 +1 @@
+kind: New
diff --git a/assets/components/lvms/change.yaml b/assets/components/lvms/change.yaml
--- a/assets/components/lvms/change.yaml
+++ b/assets/components/lvms/change.yaml
@@ -1,2 +1,2 @@
 kind: B
-old: 1
+new: 2
diff --git a/assets/components/lvms/nested/stale.yaml b/assets/components/lvms/nested/stale.yaml
deleted file mode 100644
--- a/assets/components/lvms/nested/stale.yaml
+++ /dev/null
@@ -1 +0,0 @@
-kind: Nested
diff --git a/assets/components/lvms/stale.yaml b/assets/components/lvms/stale.yaml
deleted file mode 100644
--- a/assets/components/lvms/stale.yaml
+++ /dev/null
@@ -1 +0,0 @@
-kind: Stale
`
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	// The diff describes exactly what Write then does, so the tree no longer differs.
	if _, err := Write(root, files, []string{lvmsDir}); err != nil {
		t.Fatal(err)
	}
	if d, err := Diff(root, files, []string{lvmsDir}); err != nil || d != "" {
		t.Fatalf("diff after write = %q, %v", d, err)
	}
}

// TestUnifiedAgainstDiff compares Unified with diff(1) -u on random edits when diff is
// installed, and always checks that applying the hunks to a yields b.
func TestUnifiedRandom(t *testing.T) {
	diffBin, _ := exec.LookPath("diff")
	r := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e\n"}
	gen := func() string {
		var s strings.Builder
		for i := r.Intn(30); i > 0; i-- {
			s.WriteString(words[r.Intn(len(words))])
		}
		if r.Intn(5) == 0 {
			s.WriteString("tail-without-newline")
		}
		return s.String()
	}
	dir := t.TempDir()
	for i := 0; i < 300; i++ {
		a, b := gen(), gen()
		u := Unified(a, b)
		if got := apply(t, a, u); got != b {
			t.Fatalf("case %d: patch(a) != b\na=%q\nb=%q\ndiff:\n%s", i, a, b, u)
		}
		if a == b && u != "" {
			t.Fatalf("case %d: non-empty diff of equal texts", i)
		}
		if diffBin == "" {
			continue
		}
		// diff(1) may choose other, equally short edits; compare hunk line counts instead.
		fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		for p, data := range map[string]string{fa: a, fb: b} {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, _ := exec.Command(diffBin, "-u", fa, fb).Output()
		ref := string(out)
		if idx := strings.Index(ref, "@@"); idx >= 0 {
			ref = ref[idx:]
		}
		if count(u, '+') != count(ref, '+') || count(u, '-') != count(ref, '-') {
			t.Fatalf("case %d: edit size differs from diff -u\nours:\n%s\ndiff:\n%s", i, u, ref)
		}
	}
}

func count(u string, kind byte) int {
	n := 0
	for _, l := range strings.Split(u, "\n") {
		if len(l) > 0 && l[0] == kind {
			n++
		}
	}
	return n
}

// apply applies unified hunks to a (a minimal patch(1) for the test).
func apply(t *testing.T, a, u string) string {
	t.Helper()
	x := splitLines(a)
	var out []string
	pos := 0
	lines := strings.SplitAfter(u, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@") {
			var as, al int
			spec := strings.Fields(l)[1][1:]
			var err error
			if strings.Contains(spec, ",") {
				_, err = fmt.Sscanf(spec, "%d,%d", &as, &al)
			} else {
				_, err = fmt.Sscanf(spec, "%d", &as)
				al = 1
			}
			if err != nil {
				t.Fatalf("hunk header %q: %v", l, err)
			}
			start := as - 1
			if al == 0 {
				start = as
			}
			out = append(out, x[pos:start]...)
			pos = start
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ':
			if x[pos] != text {
				t.Fatalf("context mismatch at %d: %q vs %q", pos, x[pos], text)
			}
			out = append(out, text)
			pos++
		case '-':
			if x[pos] != text {
				t.Fatalf("delete mismatch at %d: %q vs %q", pos, x[pos], text)
			}
			pos++
		case '+':
			out = append(out, text)
		}
	}
	out = append(out, x[pos:]...)
	return strings.Join(out, "")
}

// TestWriteRollbackFailure: when undoing also fails, the error says where the backups are
// and they are kept, so no old content is lost.
func TestWriteRollbackFailure(t *testing.T) {
	defer func() { renameFn = os.Rename }()
	root := seed(t)
	calls := 0
	renameFn = func(a, b string) error {
		calls++
		if calls >= 3 { // two backups succeed; the third and every undo fail
			return errors.New("injected failure")
		}
		return os.Rename(a, b)
	}
	_, err := Write(root, want(), managed)
	renameFn = os.Rename
	if err == nil || !strings.Contains(err.Error(), "backups kept in") {
		t.Fatalf("err = %v", err)
	}
	_, bak, _ := strings.Cut(err.Error(), "backups kept in ")
	bak, _, _ = strings.Cut(bak, ":")
	entries, rerr := os.ReadDir(bak)
	if rerr != nil || len(entries) == 0 {
		t.Fatalf("backups not kept in %s: %v", bak, rerr)
	}
}

// BenchmarkWrite measures a full rewrite of a 40-file component directory followed by a
// no-op write (the second run of a rebase).
func BenchmarkWrite(b *testing.B) {
	files := map[string][]byte{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("%s/f%02d.yaml", lvmsDir, i)] = []byte(strings.Repeat("key: value\n", 200))
	}
	for i := 0; i < b.N; i++ {
		root := b.TempDir()
		if _, err := Write(root, files, managed); err != nil {
			b.Fatal(err)
		}
		p, err := Write(root, files, managed)
		if err != nil || p.Changed() {
			b.Fatalf("second write: %+v, %v", p, err)
		}
	}
}

package rebase

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// runOnce rebases a fresh copy of testdata/microshift and returns the tree.
func runOnce(t *testing.T, ocp string, src source.Options) string {
	t.Helper()
	dir := copyDir(t, "../testdata/microshift")
	if _, err := Run(context.Background(), Options{OCP: ocp, AllowBaseMismatch: true, MicroShiftDir: dir, Source: src, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t)}); err != nil {
		t.Fatalf("rebase --ocp %s: %v", ocp, err)
	}
	return dir
}

// TestParallelRunsAreByteIdentical: the fetches inside a run are parallel, and so are 20
// runs here (half of them sharing one cache, half cold); every tree must be the same bytes.
func TestParallelRunsAreByteIdentical(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	shared := t.TempDir()
	const runs = 20
	hashes := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		cache := shared
		if i%2 == 1 {
			cache = t.TempDir()
		}
		wg.Go(func() {
			dir := copyDir(t, "../testdata/microshift")
			_, err := Run(context.Background(), Options{OCP: "4.17", AllowBaseMismatch: true, MicroShiftDir: dir, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t),
				Source: source.Options{Mirrors: registryMirrors(reg), CacheDir: cache, Concurrency: 1 + i%4}})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			hashes[i] = hashTree(t, dir)
		})
	}
	wg.Wait()
	for i, h := range hashes {
		if h != hashes[0] {
			t.Errorf("run %d wrote tree %s, run 0 wrote %s", i, h, hashes[0])
		}
	}
}

// TestSnapshotFilesByCommitAndPath: a cold run fetches exactly the era's snapshot files
// through the raw-URL mirror and records each in the lock; a second run with the same cache
// fetches none of them (nor any blob); an offline run with the registry gone renders the
// same tree.
func TestSnapshotFilesByCommitAndPath(t *testing.T) {
	for _, ocp := range []string{"4.17", "4.20"} {
		t.Run(ocp, func(t *testing.T) {
			e, err := era.For(ocp)
			if err != nil {
				t.Fatal(err)
			}
			needed, err := snapshot.Needed(e)
			if err != nil {
				t.Fatal(err)
			}
			reg := testregistry.NewForTest(t, testregistry.Options{})
			src := source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}

			cold := runOnce(t, ocp, src)
			st := reg.Stats()
			if n := st.Requests(http.MethodGet, testregistry.RawFilePrefix); n != len(needed) {
				t.Errorf("cold run: %d raw file requests, want %d (one per needed file)", n, len(needed))
			}
			if n := st.Requests("", testregistry.SnapshotArchivePrefix); n != 0 {
				t.Errorf("cold run fetched the archive %d times", n)
			}
			lk, err := lock.Read(filepath.Join(cold, filepath.FromSlash(lock.Path)))
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range lk.SnapshotAssets.Files {
				paths = append(paths, f.Path)
			}
			if !reflect.DeepEqual(paths, needed) || lk.SnapshotAssets.Source != snapshot.DefaultSource {
				t.Errorf("lock snapshotAssets: source %s, files %v; want %s, %v", lk.SnapshotAssets.Source, paths, snapshot.DefaultSource, needed)
			}

			reg.ResetStats()
			warm := runOnce(t, ocp, src)
			st = reg.Stats()
			if n := st.Requests("", testregistry.RawFilePrefix); n != 0 {
				t.Errorf("warm run: %d raw file requests, want 0 (cached by commit and path)", n)
			}
			if n := st.BlobGETs(); n != 0 {
				t.Errorf("warm run: %d blob GETs, want 0", n)
			}

			if err := reg.Close(); err != nil {
				t.Fatal(err)
			}
			src.Offline = true
			offline := runOnce(t, ocp, src)
			want := hashTree(t, cold)
			if hashTree(t, warm) != want || hashTree(t, offline) != want {
				t.Error("warm or offline run wrote a different tree")
			}
		})
	}
}

// TestSnapshotFilesVerifiedAgainstLock: a snapshot file whose content differs from the
// sha256 the lock recorded for the same commit fails the run, naming the file, and leaves
// the tree as it was.
func TestSnapshotFilesVerifiedAgainstLock(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	src := source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}
	dir := runOnce(t, "4.20", src)
	lp := filepath.Join(dir, filepath.FromSlash(lock.Path))
	lk, err := lock.Read(lp)
	if err != nil {
		t.Fatal(err)
	}
	lk.SnapshotAssets.Files[0].SHA256 = strings.Repeat("0", 64)
	data, err := lk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	_, err = Run(context.Background(), Options{OCP: "4.20", AllowBaseMismatch: true, MicroShiftDir: dir, Source: src, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t)})
	want := lk.SnapshotAssets.Files[0].Path + " has sha256 "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "records "+strings.Repeat("0", 64)) {
		t.Fatalf("Run: %v, want an error naming %s and the recorded sum", err, lk.SnapshotAssets.Files[0].Path)
	}
	if hashTree(t, dir) != before {
		t.Error("a failed verification changed the tree")
	}
}

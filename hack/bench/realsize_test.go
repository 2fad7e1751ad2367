package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestRealSizeBytes counts, without timing anything, what a cold rebase fetches when the
// inputs have their real sizes: an ~11 MB snapshot-controller operator archive and ~2 MB
// release-manifests layers, served by the test registry. Only the era's snapshot files
// may be fetched (never the archive), and the total must stay within 1.10× the minimal
// bytes.
func TestRealSizeBytes(t *testing.T) {
	const ocp = "4.18"
	e, err := era.For(ocp)
	if err != nil {
		t.Fatal(err)
	}
	minors, err := fixtureMinors([]string{ocp})
	if err != nil {
		t.Fatal(err)
	}
	set, err := fixtures.Build(fixtures.Options{Minors: minors, SnapshotArchiveBytes: 11400 << 10, ReleaseManifestsBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	reg := testregistry.NewForTest(t, testregistry.Options{})
	ctx := context.Background()
	if err := set.Push(ctx, reg.Host()); err != nil {
		t.Fatal(err)
	}
	var archive int64
	for _, a := range set.SnapshotAssets {
		reg.AddSnapshotArchive(a.Commit, a.Tarball)
		archive = max(archive, int64(len(a.Tarball)))
	}
	if archive < 11<<20 {
		t.Fatalf("the real-size archive is %d bytes, want at least 11 MiB", archive)
	}

	reg.ResetStats()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/microshift")); err != nil {
		t.Fatal(err)
	}
	mirrors := []source.Mirror{
		{Source: "registry.redhat.io", Mirror: reg.Host() + "/registry.redhat.io"},
		{Source: "quay.io", Mirror: reg.Host() + "/quay.io"},
		{Source: "raw.githubusercontent.com", Mirror: reg.Host() + "/raw.githubusercontent.com"},
		{Source: "storage.googleapis.com", Mirror: reg.Host() + "/storage.googleapis.com"},
	}
	if _, err := rebase.Run(ctx, rebase.Options{OCP: ocp, AllowBaseMismatch: true, MicroShiftDir: dir, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test",
		Source: source.Options{Mirrors: mirrors, CacheDir: t.TempDir()}, Provenance: rebase.ProvenanceOptions{PolicyFile: reg.PolicyFile()}}); err != nil {
		t.Fatal(err)
	}
	st := reg.Stats()
	fetched := st.Bytes()

	lk, err := lock.Read(filepath.Join(dir, filepath.FromSlash(lock.Path)))
	if err != nil {
		t.Fatal(err)
	}
	minimal, err := minimalBytes(ctx, reg.Host(), lk)
	if err != nil {
		t.Fatal(err)
	}
	needed, err := snapshot.Needed(e)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Requests("", testregistry.SnapshotArchivePrefix); n != 0 {
		t.Errorf("the %d-byte archive was requested %d times", archive, n)
	}
	if n := st.Requests(http.MethodGet, testregistry.RawFilePrefix); n != len(needed) {
		t.Errorf("%d snapshot file requests, want %d", n, len(needed))
	}
	if payload := minimal.Parts[1].Bytes; payload < 2<<20 {
		t.Errorf("minimal %s is %d bytes: the release-manifests layer is not real-size", minimal.Parts[1].Name, payload)
	}
	total := minimal.Total()
	t.Logf("fetched %d bytes, minimal %d (%.3fx); archive %d", fetched, total, float64(fetched)/float64(total), archive)
	if fetched < total || float64(fetched) > 1.10*float64(total) {
		t.Errorf("fetched %d bytes, want between the minimal %d and 1.10× it (%v)", fetched, total, minimal.Parts)
	}
}

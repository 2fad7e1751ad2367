package rebase

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// brokenOverlay is the embedded kustomize tree with the era's overlay replaced by one that
// references a missing resource, so that only the render phase can fail.
func brokenOverlay(t *testing.T, overlay string) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(lvmsrebase.Kustomize, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(lvmsrebase.Kustomize, p)
		m[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m[overlay+"/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n- does-not-exist.yaml\n"), Mode: 0o644}
	return m
}

func hashTree(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		h.Write([]byte(rel + "\x00"))
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// registryMirrors point the registries and raw.githubusercontent.com at the loopback registry.
func registryMirrors(reg *testregistry.Registry) []source.Mirror {
	return []source.Mirror{
		{Source: "registry.redhat.io", Mirror: reg.Host() + "/registry.redhat.io"},
		{Source: "quay.io", Mirror: reg.Host() + "/quay.io"},
		{Source: "raw.githubusercontent.com", Mirror: reg.Host() + "/raw.githubusercontent.com"},
		{Source: "github.com", Mirror: reg.Host() + "/github.com"},
		{Source: "storage.googleapis.com", Mirror: reg.Host() + "/storage.googleapis.com"},
		{Source: "mirror.openshift.com", Mirror: reg.Host() + "/mirror.openshift.com"},
	}
}

// signed trusts the signatures the test registries serve (testsign.Shared's keys).
func signed(t testing.TB) ProvenanceOptions {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.json")
	if err := testsign.Shared().WritePolicy(p); err != nil {
		t.Fatal(err)
	}
	return ProvenanceOptions{PolicyFile: p}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestRenderErrorLeavesTreeUntouched(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	dir := copyDir(t, "../testdata/microshift")
	before := hashTree(t, dir)
	_, err := Run(context.Background(), Options{
		OCP: "4.18", AllowBaseMismatch: true,
		MicroShiftDir: dir,
		Source:        source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()},
		Kustomize:     brokenOverlay(t, "overlays/lvms/4.18"),
		Provenance:    signed(t),
	})
	if err == nil || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Fatalf("Run with a broken overlay: error %v, want one naming does-not-exist.yaml", err)
	}
	if hashTree(t, dir) != before {
		t.Fatal("a failed render changed the tree")
	}
}

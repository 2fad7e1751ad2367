package rebase

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestRunCoversEveryTreeArch: a run for a subset of the tree's arches is refused before the
// network and leaves the tree as it was (it would rebase the manifests and the lock while
// release-aarch64.json kept the old images); a tree holding only the arches asked for is
// rebased; under --check a lock that covers fewer arches than the tree is drift, not usage.
func TestRunCoversEveryTreeArch(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	run := func(dir string, mode Mode, arches ...string) error {
		_, err := Run(context.Background(), Options{
			OCP: "4.18", AllowBaseMismatch: true, Mode: mode, MicroShiftDir: dir,
			Source:     source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir(), Arches: arches},
			Provenance: signed(t), Kustomize: lvmsrebase.Kustomize, ToolVersion: "test",
		})
		return err
	}
	aarch64 := filepath.FromSlash(releasefile.RepoPath("aarch64"))

	for _, mode := range []Mode{ModeWrite, ModeDryRun, ModeDiff} {
		dir := copyDir(t, "../testdata/microshift")
		before := hashTree(t, dir)
		err := run(dir, mode, "x86_64")
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), releasefile.RepoPath("aarch64")) {
			t.Errorf("%s with x86_64 only on a two-arch tree: %v; want a usage error naming %s", mode, err, releasefile.RepoPath("aarch64"))
		}
		if hashTree(t, dir) != before {
			t.Errorf("%s: the refused run changed the tree", mode)
		}
	}

	two := copyDir(t, "../testdata/microshift")
	if err := run(two, ModeWrite); err != nil {
		t.Fatal(err)
	}
	if err := run(two, ModeCheck, "aarch64", "x86_64"); err != nil {
		t.Errorf("--check given the lock's arches in another order: %v", err)
	}
	if err := run(two, ModeCheck, "x86_64"); err == nil || !IsUsage(err) || !strings.Contains(err.Error(), "differs from the lock file's payload arches") {
		t.Errorf("--check given fewer arches than the lock: %v; want a usage error", err)
	}

	dir := copyDir(t, "../testdata/microshift")
	kept, err := os.ReadFile(filepath.Join(dir, aarch64))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, aarch64)); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, ModeWrite, "x86_64"); err != nil {
		t.Fatalf("x86_64 on an x86_64-only tree: %v", err)
	}
	if err := run(dir, ModeCheck); err != nil {
		t.Fatalf("--check of the x86_64-only tree: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, aarch64), kept, 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(dir, ModeCheck)
	if err == nil || IsUsage(err) || !strings.Contains(err.Error(), releasefile.RepoPath("aarch64")) || errors.Is(err, context.Canceled) {
		t.Errorf("--check with a lock for x86_64 on a two-arch tree: %v; want an error (not usage) naming %s", err, releasefile.RepoPath("aarch64"))
	}
}

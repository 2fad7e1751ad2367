package applier

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// goldenEras are the asset trees the rebase itself produces (testdata/golden/<ocp>/assets at the
// repository root); applying them proves the applier accepts real rebase output, quirks included.
func goldenEras(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*", "assets"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden asset trees under ../testdata/golden")
	}
	return dirs
}

func TestApplyGoldenEras(t *testing.T) {
	for _, dir := range goldenEras(t) {
		ocp := filepath.Base(filepath.Dir(dir))
		t.Run(ocp, func(t *testing.T) {
			e := newEnv(t)
			o := testOptions(t, "4.18")
			o.Assets = withoutBlockingWebhooks(t, os.DirFS(dir))
			res := e.apply(o)
			if len(res.Created) == 0 || len(res.Updated)+len(res.Deleted) != 0 {
				t.Fatalf("first apply of %s: created %v updated %v deleted %v", dir, res.Created, res.Updated, res.Deleted)
			}
			t.Logf("%s: era %s, %d created, %d skipped %v", ocp, res.Era, len(res.Created), len(res.Skipped), res.Skipped)
			e.assertNoop(o, res)
		})
	}
}

// withoutBlockingWebhooks turns failurePolicy Fail into Ignore: no webhook server runs next to the
// test API server, so a matching Fail webhook would reject every LVMCluster (see
// TestWebhookNotServingYet for how Apply copes with that on a real node).
func withoutBlockingWebhooks(t *testing.T, fsys fs.FS) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		m[p] = &fstest.MapFile{Data: bytes.ReplaceAll(data, []byte("failurePolicy: Fail"), []byte("failurePolicy: Ignore"))}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

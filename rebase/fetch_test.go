package rebase

import (
	"context"
	"net/http"
	"strings"
	"testing"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestFetchPhasesReuseResolution: the fetch phases take what resolution read. A cold run
// downloads every blob once and exactly the blobs a resolution alone downloads (nothing is
// extracted twice) besides the signatures' payloads, each also once (verifications that look
// at one list's .sig at the same time share its fetch), and its per-image costs are the ones
// resolution recorded.
func TestFetchPhasesReuseResolution(t *testing.T) {
	for _, ocp := range []string{"4.17", "4.20"} {
		t.Run(ocp, func(t *testing.T) {
			reg := testregistry.NewForTest(t, testregistry.Options{})
			ctx := context.Background()
			src := source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}
			s, err := source.New(src)
			if err != nil {
				t.Fatal(err)
			}
			choice, err := s.ChooseLVMS(ctx, ocp, "")
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Resolve(ctx, ocp, choice.Minor)
			if err != nil {
				t.Fatal(err)
			}
			resolveBlobs := blobGETs(reg.Stats())

			reg.ResetStats()
			src.CacheDir = t.TempDir()
			dir := copyDir(t, "../testdata/microshift")
			out, err := Run(ctx, Options{OCP: ocp, AllowBaseMismatch: true, MicroShiftDir: dir, Source: src, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t)})
			if err != nil {
				t.Fatal(err)
			}
			runBlobs := blobGETs(reg.Stats())
			sigBlobs := 0
			for path, n := range runBlobs {
				if n != 1 {
					t.Errorf("run: %s fetched %d times, want once", path, n)
				}
				// The signatures' payloads are fetched by the run alone (verification).
				if reg.SignatureBlob(path[strings.LastIndex(path, "/")+1:]) {
					delete(runBlobs, path)
					sigBlobs++
					continue
				}
				if resolveBlobs[path] == 0 {
					t.Errorf("run fetched %s, which resolution alone does not", path)
				}
			}
			if sigBlobs == 0 {
				t.Error("the run fetched no signature payload")
			}
			if len(runBlobs) != len(resolveBlobs) {
				t.Errorf("run fetched %d blobs, resolution alone %d", len(runBlobs), len(resolveBlobs))
			}
			// Fetched lists the bundle, then the payloads, with the costs a cold resolution
			// records: a second extraction (from the cache) would count cached blobs instead.
			want := []source.FetchStats{res.Content.BundleStats}
			for _, p := range res.Payloads {
				want = append(want, res.Content.PayloadStats[p.Arch])
			}
			if len(out.Fetched) < len(want) {
				t.Fatalf("fetched %+v, want at least %d entries", out.Fetched, len(want))
			}
			for i, w := range want {
				if got := out.Fetched[i]; !sameCost(got, w) {
					t.Errorf("fetched[%d] = %+v, want %+v", i, got, w)
				}
			}
		})
	}
}

// sameCost compares two fetches' images, files and costs.
func sameCost(a, b source.FetchStats) bool {
	return a.Image == b.Image && strings.Join(a.Files, ",") == strings.Join(b.Files, ",") && a.LayersRead == b.LayersRead &&
		a.BytesFetched == b.BytesFetched && a.BlobsFetched == b.BlobsFetched && a.BlobsCached == b.BlobsCached && b.BlobsFetched > 0
}

// blobGETs counts the blob GETs per path.
func blobGETs(st testregistry.Stats) map[string]int {
	out := map[string]int{}
	for _, p := range st.Paths {
		if p.Method == http.MethodGet && strings.Contains(p.Path, "/blobs/sha256:") {
			out[p.Path] += p.Requests
		}
	}
	return out
}

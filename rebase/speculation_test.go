package rebase

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// paddedPayloads pushes the 4.18 fixtures with release-manifests layers of real-ish size
// (the decompressor hands out image-references once the 32 KiB window behind it fills, while
// the rest of the layer is still on its way) and returns the x86_64 payload's top layer
// path and its snapshot commit.
func paddedPayloads(t *testing.T, reg *testregistry.Registry) (blobPath, commit string) {
	t.Helper()
	set, err := fixtures.Build(fixtures.Options{Minors: []string{"4.18"}, ReleaseManifestsBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Push(context.Background(), reg.Host()); err != nil {
		t.Fatal(err)
	}
	p, top, err := set.NewestPayloadTop("4.18", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	h, err := top.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return "/blobs/" + h.String(), p.SnapshotCommit
}

// rawRequests counts the snapshot-file requests whose path holds s.
func rawRequests(reg *testregistry.Registry, s string) int {
	return reg.Stats().Requests(http.MethodGet, "/raw.githubusercontent.com/openshift/cluster-csi-snapshot-controller-operator/"+s)
}

// TestSnapshotFilesReadWhilePayloadsDownload: the snapshot files are requested while the
// first arch's payload layer is still downloading. The registry holds the second half of
// that layer until it has served a snapshot file (10 s at most); a run that waited for the
// verified layer before asking for the files would ask only after the hold. The tree is the
// one a run without the hold writes.
func TestSnapshotFilesReadWhilePayloadsDownload(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	blob, commit := paddedPayloads(t, reg)
	want := hashTree(t, runOnce(t, "4.18", source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}))
	reg.ResetStats()
	release := make(chan struct{})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: blob, Kind: testregistry.FaultPause, Release: release})
	during := make(chan bool, 1)
	go func() {
		defer close(release)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if rawRequests(reg, commit) > 0 {
				during <- true
				return
			}
		}
		during <- false
	}()
	got := hashTree(t, runOnce(t, "4.18", source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}))
	if !<-during {
		t.Error("no snapshot file was requested while the x86_64 payload layer was held: the run waited for the whole layer")
	}
	if reg.FaultHits() != 1 {
		t.Errorf("the layer was held %d times, want 1", reg.FaultHits())
	}
	if got != want {
		t.Errorf("the tree differs from a run without the hold")
	}
}

// TestSpeculationAtAnotherCommitIsDropped: the x86_64 payload layer's first attempt delivers
// another image-references (naming a commit the snapshot source does not have), then breaks
// off; the retry delivers the real layer. The snapshot files requested at the unverified
// commit are dropped, those at the verified one used: the run succeeds with the tree a run
// without the fault writes.
func TestSpeculationAtAnotherCommitIsDropped(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	blob, commit := paddedPayloads(t, reg)
	want := hashTree(t, runOnce(t, "4.18", source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}))
	reg.ResetStats()
	const bogus = "0123456789abcdef0123456789abcdef01234567"
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: blob, Kind: testregistry.FaultTruncate, Count: 1, Body: layerNaming(t, bogus)})
	got := hashTree(t, runOnce(t, "4.18", source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}))
	if n := rawRequests(reg, bogus); n == 0 {
		t.Error("no snapshot file was requested at the first attempt's commit: nothing was speculated, so nothing was dropped")
	}
	if n := rawRequests(reg, commit); n == 0 {
		t.Errorf("no snapshot file was requested at the verified commit %s", commit)
	}
	if got != want {
		t.Errorf("the tree differs from a run without the fault")
	}
}

// layerNaming is a payload top layer whose image-references names commit for the snapshot
// controller operator, padded with incompressible bytes so that its first half holds it.
func layerNaming(t *testing.T, commit string) []byte {
	t.Helper()
	var refs payload.ImageStream
	refs.Kind, refs.APIVersion, refs.Metadata.Name = "ImageStream", "image.openshift.io/v1", "4.18.10"
	tag := payload.Tag{Name: payload.SnapshotOperatorTag, Annotations: map[string]string{payload.CommitAnnotation: commit}}
	tag.From = &struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}{Kind: "DockerImage", Name: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("0", 64)}
	refs.Spec.Tags = []payload.Tag{tag}
	data, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, 256<<10)
	if _, err := rand.Read(pad); err != nil {
		t.Fatal(err)
	}
	layer, err := fixtures.GzipLayer(fixtures.Entry{Name: payload.Dir + "/" + payload.ImageReferencesFile, Data: data},
		fixtures.Entry{Name: payload.Dir + "/0000_99_padding.yaml", Data: pad})
	if err != nil {
		t.Fatal(err)
	}
	return layer
}

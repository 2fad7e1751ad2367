package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/dirtree"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

const imageReferences = "release-manifests/image-references"

// payloadFixture is the newest x86_64 payload of OpenShift 4.18 as the fixture registry
// serves it: its canonical reference, its top layer's digest and the layer's bytes.
type payloadFixture struct {
	ref   string
	top   v1.Hash
	layer []byte
}

// newPayloadFixture generates the 4.18 fixtures; with padding, the release-manifests layers
// carry that many more bytes (as real ones do, ~2 MB) and the set is pushed to reg, whose
// payload tags then name the padded images.
func newPayloadFixture(t *testing.T, reg *testregistry.Registry, padding int64) payloadFixture {
	t.Helper()
	set, err := fixtures.Build(fixtures.Options{Minors: []string{"4.18"}, ReleaseManifestsBytes: padding})
	if err != nil {
		t.Fatal(err)
	}
	if padding > 0 {
		if err := set.Push(context.Background(), reg.Host()); err != nil {
			t.Fatal(err)
		}
	}
	p, top, err := set.NewestPayloadTop("4.18", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	f := payloadFixture{ref: p.Ref}
	if f.top, err = top.Digest(); err != nil {
		t.Fatal(err)
	}
	rc, err := top.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if f.layer, err = io.ReadAll(rc); err != nil {
		t.Fatal(err)
	}
	return f
}

// want is the release-manifests/ of the layer, extracted from its bytes.
func (p payloadFixture) want(t *testing.T) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(p.layer))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := extract.Tar(zr, dir, extract.Options{Prefixes: []string{"release-manifests/"}}); err != nil {
		t.Fatal(err)
	}
	return readTree(t, dir)
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out, err := dirtree.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// otherLayer is a gzip tar of another release-manifests/ (an extra file, another
// image-references) padded so its first half holds both.
func otherLayer(t *testing.T) []byte {
	t.Helper()
	pad := bytes.Repeat([]byte("incompressible? no, but long enough\n"), 2000)
	layer, err := fixtures.GzipLayer(fixtures.Entry{Name: imageReferences, Data: []byte(`{"kind":"ImageStream"}`)},
		fixtures.Entry{Name: "release-manifests/extra.yaml", Data: []byte("kind: Extra\n")}, fixtures.Entry{Name: "padding", Data: pad})
	if err != nil {
		t.Fatal(err)
	}
	return layer
}

// streamClient is a Client of the fixture registry (quay.io mirrored to it) with fast retries.
func streamClient(t *testing.T, reg *testregistry.Registry, c *cache.Cache) *Client {
	t.Helper()
	m, err := mirror.Parse("quay.io=" + reg.Host() + "/quay.io")
	if err != nil {
		t.Fatal(err)
	}
	return newClient(t, Options{Mirrors: []mirror.Mirror{m}, Insecure: []string{reg.Host()}, Cache: c,
		Retry: transport.RetryOptions{Attempts: 3, Backoff: time.Millisecond}}, nil)
}

func payloadRequest(ref string, onFile func(string)) Request {
	return Request{Kind: "payload", Ref: ref, Arch: "x86_64", Prefixes: []string{"release-manifests/"},
		Want: []string{imageReferences, "release-manifests/release-metadata"}, OnFile: onFile}
}

// TestExtractStreamsTopLayer: the payload's top layer is extracted as it downloads. The
// registry sends half of the layer and holds the rest until OnFile has heard of
// image-references (10 s at most): a client that extracted only the complete blob would hear
// of it after the hold. The result is the layer's release-manifests/, from one
// download.
func TestExtractStreamsTopLayer(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	// A real release-manifests layer is ~2 MB: image-references comes out of the decompressor
	// as soon as the 32 KiB window behind it fills, while the rest is still on its way.
	p := newPayloadFixture(t, reg, 256<<10)
	release, heard := make(chan struct{}), make(chan struct{})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/blobs/" + p.top.String(), Kind: testregistry.FaultPause,
		Size: int64(len(p.layer) / 2), Release: release})
	heardFirst := make(chan bool, 1)
	go func() {
		select {
		case <-heard:
			heardFirst <- true
		case <-time.After(10 * time.Second):
			heardFirst <- false
		}
		close(release)
	}()
	var once sync.Once
	onFile := func(f string) {
		if f == imageReferences {
			once.Do(func() { close(heard) })
		}
	}
	dir := t.TempDir()
	st, _, err := streamClient(t, reg, cache.New(t.TempDir())).Extract(context.Background(), payloadRequest(p.ref, onFile), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !<-heardFirst {
		t.Error("image-references was heard of only after the layer's last bytes: the top layer was not extracted while it downloaded")
	}
	if diff := cmp.Diff(p.want(t), readTree(t, dir)); diff != "" {
		t.Errorf("extracted files (-want +got):\n%s", diff)
	}
	if n := reg.Stats().Requests(http.MethodGet, p.top.Hex); n != 1 || st.LayersRead != 1 || st.BlobsFetched != 2 {
		t.Errorf("top layer GETs %d, layers read %d, blobs fetched %d; want 1, 1 and 2 (config and top layer)", n, st.LayersRead, st.BlobsFetched)
	}
}

// TestExtractStreamFallsBack: a stream that cannot be used — its first attempt cut short
// (with the real bytes, or with other content that a retry replaces), or the layer already
// cached — leaves the verified blob's files and nothing of the stream's; content that does
// not match its digest fails without a retry, whatever the stream extracted.
func TestExtractStreamFallsBack(t *testing.T) {
	p := newPayloadFixture(t, nil, 0)
	blob := "/blobs/" + p.top.String()
	tests := []struct {
		name     string
		fault    testregistry.Fault
		warm     bool
		wantErr  string
		wantGETs int
	}{
		{name: "first attempt truncated", fault: testregistry.Fault{Kind: testregistry.FaultTruncate, Count: 1}, wantGETs: 2},
		{name: "first attempt other content", fault: testregistry.Fault{Kind: testregistry.FaultTruncate, Count: 1, Body: otherLayer(t)}, wantGETs: 2},
		{name: "cached layer", warm: true, wantGETs: 0},
		{name: "digest mismatch", fault: testregistry.Fault{Kind: testregistry.FaultCorrupt}, wantErr: "does not match", wantGETs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := testregistry.NewForTest(t, testregistry.Options{})
			c := cache.New(t.TempDir())
			if tt.warm {
				if _, _, err := streamClient(t, reg, c).Extract(context.Background(), payloadRequest(p.ref, nil), t.TempDir()); err != nil {
					t.Fatal(err)
				}
				reg.ResetStats()
			}
			if tt.fault.Kind != 0 {
				tt.fault.Method, tt.fault.Path = http.MethodGet, blob
				reg.Inject(tt.fault)
			}
			var heard []string
			dir := t.TempDir()
			_, _, err := streamClient(t, reg, c).Extract(context.Background(), payloadRequest(p.ref, func(f string) { heard = append(heard, f) }), dir)
			if n := reg.Stats().Requests(http.MethodGet, p.top.Hex); n != tt.wantGETs {
				t.Errorf("top layer GETs %d, want %d", n, tt.wantGETs)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p.want(t), readTree(t, dir)); diff != "" {
				t.Errorf("extracted files (-want +got):\n%s", diff)
			}
			for f := range p.want(t) {
				if !slices.Contains(heard, f) {
					t.Errorf("OnFile never heard of %s (heard %q)", f, heard)
				}
			}
		})
	}
}

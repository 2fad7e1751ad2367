package fetch

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestProgress downloads a blob larger than ProgressMinBytes and expects a final report
// with every byte, and no report for the small config blob.
func TestProgress(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(3<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(host + "/lvms4/lvms-operator-bundle:v4.18.0")
	if err := remote.Write(ref, img, remote.WithContext(context.Background())); err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	size, _ := layers[0].Size()
	digest, _ := layers[0].Digest()

	var mu sync.Mutex
	var got []Progress
	s := newClient(t, Options{Progress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}}, nil)
	// The random layer holds no bundle files; only the download matters here.
	_, _, _ = s.Extract(context.Background(), Request{Kind: "bundle", Ref: ref.String(), Prefixes: []string{"manifests/"}}, t.TempDir())

	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress reported for a 3 MiB blob")
	}
	last := got[len(got)-1]
	if !last.Finished || last.Done != size || last.Total != size || last.Digest != digest.String() {
		t.Fatalf("last report %+v, want finished %d/%d bytes of %s", last, size, size, digest)
	}
	for _, p := range got {
		if p.Digest != digest.String() {
			t.Errorf("progress reported for %s, a blob under ProgressMinBytes", p.Digest)
		}
	}
}

package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// lyingRegistry serves manifests with the Content-Type it is told and blobs by digest.
type lyingRegistry struct {
	manifests map[string]servedManifest // by tag and by digest
	blobs     map[string][]byte         // by digest
}

type servedManifest struct {
	contentType string
	body        []byte
}

func (l *lyingRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/v2/":
		w.WriteHeader(http.StatusOK)
	case strings.Contains(p, "/manifests/"):
		m, ok := l.manifests[p[strings.LastIndex(p, "/")+1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", m.contentType)
		w.Header().Set("Docker-Content-Digest", digestOf(m.body))
		w.Header().Set("Content-Length", fmt.Sprint(len(m.body)))
		if r.Method != http.MethodHead {
			_, _ = w.Write(m.body)
		}
	case strings.Contains(p, "/blobs/"):
		b, ok := l.blobs[p[strings.LastIndex(p, "/")+1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (l *lyingRegistry) blob(b []byte) v1.Descriptor {
	d := digestOf(b)
	l.blobs[d] = b
	h, _ := v1.NewHash(d)
	return v1.Descriptor{Digest: h, Size: int64(len(b))}
}

// image adds an image tagged tag whose one layer holds data/file, stored compressed as
// layerBytes says, and declared with layerType; the manifest is served with contentType and
// declares manifestType in its body ("" for none).
func (l *lyingRegistry) image(t *testing.T, tag string, layerType types.MediaType, gz bool, contentType, manifestType string) {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	_ = tw.WriteHeader(&tar.Header{Name: "data/file", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("hello"))
	_ = tw.Close()
	layer := tb.Bytes()
	if gz {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		_, _ = zw.Write(layer)
		_ = zw.Close()
		layer = zb.Bytes()
	}
	cfg, _ := json.Marshal(v1.ConfigFile{OS: "linux", Architecture: "amd64", RootFS: v1.RootFS{Type: "layers"}})
	ld := l.blob(layer)
	ld.MediaType = layerType
	cd := l.blob(cfg)
	cd.MediaType = types.OCIConfigJSON
	mf := map[string]any{"schemaVersion": 2, "config": cd, "layers": []v1.Descriptor{ld}, "annotations": map[string]string{"tag": tag}}
	if manifestType != "" {
		mf["mediaType"] = manifestType
	}
	body, _ := json.Marshal(mf)
	l.manifests[tag] = servedManifest{contentType: contentType, body: body}
	l.manifests[digestOf(body)] = servedManifest{contentType: contentType, body: body}
}

// index adds an index tagged tag naming the manifest of child with childType.
func (l *lyingRegistry) index(tag, child string, childType types.MediaType) {
	body := l.manifests[child].body
	h, _ := v1.NewHash(digestOf(body))
	idx, _ := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{
		{MediaType: childType, Digest: h, Size: int64(len(body)), Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}}})
	l.manifests[tag] = servedManifest{contentType: string(types.OCIImageIndex), body: idx}
}

// TestLyingMediaType: a manifest or layer whose declared media type contradicts its content
// is refused naming the reference, the declared and the actual type — a Content-Type against
// the manifest's own mediaType or shape, an index entry's type against the manifest it names,
// a layer's type against its compression — whether the layer is streamed or extracted from
// the cache. Honest images, and a registry declaring no manifest type, still pull.
func TestLyingMediaType(t *testing.T) {
	l := &lyingRegistry{manifests: map[string]servedManifest{}, blobs: map[string][]byte{}}
	oci, ociMf := string(types.OCIManifestSchema1), string(types.OCIManifestSchema1)
	l.image(t, "honest", types.OCILayer, true, oci, ociMf)
	l.image(t, "undeclared", types.OCILayer, true, "application/json", "")
	l.image(t, "uncompressed", types.OCIUncompressedLayer, false, oci, ociMf)
	l.image(t, "says-index", types.OCILayer, true, string(types.OCIImageIndex), ociMf)
	l.image(t, "says-index-no-field", types.OCILayer, true, string(types.OCIImageIndex), "")
	l.image(t, "says-docker", types.OCILayer, true, string(types.DockerManifestSchema2), ociMf)
	l.image(t, "field-says-index", types.OCILayer, true, "", string(types.OCIImageIndex))
	l.image(t, "gzip-is-plain", types.OCILayer, false, oci, ociMf)
	l.image(t, "plain-is-gzip", types.OCIUncompressedLayer, true, oci, ociMf)
	l.image(t, "zstd-is-gzip", types.OCILayerZStd, true, oci, ociMf)
	l.image(t, "config-type-layer", types.OCIConfigJSON, true, oci, ociMf)
	l.index("index-honest", "honest", types.OCIManifestSchema1)
	l.index("index-entry-lies", "honest", types.OCIImageIndex)
	srv := httptest.NewServer(l)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		tag, declared, actual string // declared "" = pulls
	}{
		{tag: "honest"},
		{tag: "undeclared"},
		{tag: "uncompressed"},
		{tag: "index-honest"},
		{"says-index", string(types.OCIImageIndex), "a manifest whose mediaType is " + ociMf},
		{"says-index-no-field", string(types.OCIImageIndex), "an image manifest (a config and layers)"},
		{"says-docker", string(types.DockerManifestSchema2), "a manifest whose mediaType is " + ociMf},
		{"field-says-index", string(types.OCIImageIndex), "an image manifest (a config and layers)"},
		{"gzip-is-plain", string(types.OCILayer), "but the content is uncompressed"},
		{"plain-is-gzip", string(types.OCIUncompressedLayer), "but the content is gzip-compressed"},
		{"zstd-is-gzip", string(types.OCILayerZStd), "but the content is gzip-compressed"},
		{"config-type-layer", string(types.OCIConfigJSON), "the declared type is no layer type"},
		{"index-entry-lies", string(types.OCIImageIndex), "a manifest whose mediaType is " + ociMf},
	} {
		for _, streamed := range []bool{false, true} {
			ref := host + "/lies/image:" + tc.tag
			req := Request{Kind: "test image", Ref: ref, Prefixes: []string{"data/"}}
			if streamed {
				req.Want = []string{"data/file"}
			}
			c := newClient(t, Options{Insecure: []string{host}, Retry: transport.RetryOptions{Attempts: 1}}, nil)
			_, _, err := c.Extract(context.Background(), req, t.TempDir())
			var me *MediaTypeError
			switch {
			case tc.declared == "" && err != nil:
				t.Errorf("%s (streamed %v): %v", tc.tag, streamed, err)
			case tc.declared != "" && (!errorsAs(err, &me) || !strings.Contains(err.Error(), ref) ||
				!strings.Contains(err.Error(), "declared media type "+tc.declared) || !strings.Contains(err.Error(), tc.actual)):
				t.Errorf("%s (streamed %v): %v\nwant a MediaTypeError naming %s, %s and %q", tc.tag, streamed, err, ref, tc.declared, tc.actual)
			}
		}
	}
}

func errorsAs(err error, target any) bool { return err != nil && errors.As(err, target) }

// TestDeclaredSizesAreBounded: a manifest may declare any size for its blobs; a layer
// declared larger than --max-image-size, or a config larger than the cap of a document read
// into memory, is refused before a byte of it is asked for.
func TestDeclaredSizesAreBounded(t *testing.T) {
	l := &lyingRegistry{manifests: map[string]servedManifest{}, blobs: map[string][]byte{}}
	l.image(t, "honest", types.OCILayer, true, string(types.OCIManifestSchema1), string(types.OCIManifestSchema1))
	var mf v1.Manifest
	if err := json.Unmarshal(l.manifests["honest"].body, &mf); err != nil {
		t.Fatal(err)
	}
	serve := func(tag string, m v1.Manifest) {
		body, _ := json.Marshal(m)
		l.manifests[tag] = servedManifest{contentType: string(types.OCIManifestSchema1), body: body}
	}
	huge := mf
	huge.Layers = []v1.Descriptor{mf.Layers[0]}
	huge.Layers[0].Size = 1 << 40
	serve("huge-layer", huge)
	bigConfig := mf
	bigConfig.Config.Size = 17 << 20
	serve("huge-config", bigConfig)
	var layerGETs, configGETs int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/blobs/"+mf.Layers[0].Digest.String()):
			layerGETs++
		case strings.HasSuffix(r.URL.Path, "/blobs/"+mf.Config.Digest.String()):
			configGETs++
		}
		l.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for tag, want := range map[string]string{
		"huge-layer":  fmt.Sprintf("blob %s declares 1099511627776 bytes, over the %d of MaxImageSize", mf.Layers[0].Digest, 1<<30),
		"huge-config": fmt.Sprintf("config %s declares 17825792 bytes, over the 16777216-byte cap", mf.Config.Digest),
	} {
		layerGETs, configGETs = 0, 0
		c := newClient(t, Options{Insecure: []string{host}, MaxImageSize: 1 << 30, Retry: transport.RetryOptions{Attempts: 1}}, nil)
		_, _, err := c.Extract(context.Background(), Request{Kind: "test image", Ref: host + "/lies/image:" + tag, Prefixes: []string{"data/"}}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) || !transport.IsLimit(err) {
			t.Errorf("%s: %v, want a LimitError with %q", tag, err, want)
		}
		if layerGETs != 0 || (tag == "huge-config" && configGETs != 0) {
			t.Errorf("%s: %d layer and %d config requests, want no request for what is too large", tag, layerGETs, configGETs)
		}
	}
}

// TestDeepDocumentsAreRefused: a manifest or image config nested a million levels deep
// (within the size caps) ends the pull with an error naming the reference: the JSON decoders
// stop at their depth cap (encoding/json's 10,000 levels), neither the probe of the lying media
// type check nor go-containerregistry's decode recurses through it.
func TestDeepDocumentsAreRefused(t *testing.T) {
	l := &lyingRegistry{manifests: map[string]servedManifest{}, blobs: map[string][]byte{}}
	deep := strings.Repeat("[", 1_000_000)
	oci := string(types.OCIManifestSchema1)
	body := []byte(`{"schemaVersion": 2, "mediaType": "` + oci + `", "x": ` + deep)
	l.manifests["deep-manifest"] = servedManifest{contentType: oci, body: body}
	l.image(t, "honest", types.OCILayer, true, oci, oci)
	var mf v1.Manifest
	if err := json.Unmarshal(l.manifests["honest"].body, &mf); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(`{"architecture": "amd64", "os": "linux", "x": ` + deep)
	mf.Config = l.blob(cfg)
	mf.Config.MediaType = types.OCIConfigJSON
	b, _ := json.Marshal(mf)
	l.manifests["deep-config"] = servedManifest{contentType: oci, body: b}
	srv := httptest.NewServer(l)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tag := range []string{"deep-manifest", "deep-config"} {
		c := newClient(t, Options{Insecure: []string{host}, Retry: transport.RetryOptions{Attempts: 1}}, nil)
		ref := host + "/deep/image:" + tag
		_, _, err := c.Extract(context.Background(), Request{Kind: "test image", Ref: ref, Prefixes: []string{"data/"}}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "exceeded max depth") || !strings.Contains(err.Error(), ref) {
			t.Errorf("%s: %v, want an error naming %s and the depth cap", tag, err, ref)
		}
	}
}

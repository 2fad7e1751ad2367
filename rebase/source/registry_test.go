package source

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// faultKind is an injected registry misbehaviour.
type faultKind int

const (
	faultStatus   faultKind = iota // answer with status (and Retry-After)
	faultReset                     // close the connection without an answer
	faultTruncate                  // send headers and half the body, then close
	faultCorrupt                   // flip a byte of the body
	faultDelay                     // sleep before answering
)

type fault struct {
	match      string // substring of the request path
	kind       faultKind
	status     int
	retryAfter string
	delay      time.Duration
	times      int // how many requests to affect (-1 = all)
}

// testRegistry is ggcr's in-memory registry behind a wrapper that adds basic auth, tag
// pagination with Link headers, fault injection and request counters.
type testRegistry struct {
	srv      *httptest.Server
	inner    http.Handler
	user     string
	pass     string
	pageSize int

	mu        sync.Mutex
	faults    []*fault
	requests  []string // "METHOD path"
	blobBytes int64    // body bytes of blob GETs
}

// countingWriter counts body bytes written for blob GETs.
type countingWriter struct {
	http.ResponseWriter
	r *testRegistry
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.r.mu.Lock()
	c.r.blobBytes += int64(n)
	c.r.mu.Unlock()
	return n, err
}

func (r *testRegistry) fetchedBlobBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blobBytes
}

func newTestRegistry(t testing.TB) *testRegistry {
	r := startTestRegistry()
	t.Cleanup(r.srv.Close)
	return r
}

// startTestRegistry starts a registry that lives until the process exits (benchmarks share
// one across runs).
func startTestRegistry() *testRegistry {
	r := &testRegistry{inner: registry.New(registry.Logger(log.New(io.Discard, "", 0))), pageSize: 3}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *testRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *testRegistry) inject(f fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, &f)
}

func (r *testRegistry) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = nil
	r.faults = nil
	r.blobBytes = 0
}

// count returns how many requests had method and a path containing sub.
func (r *testRegistry) count(method, sub string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.requests {
		m, p, _ := strings.Cut(q, " ")
		if m == method && strings.Contains(p, sub) {
			n++
		}
	}
	return n
}

func (r *testRegistry) blobGETs() int { return r.count(http.MethodGet, "/blobs/") }

func (r *testRegistry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	var f *fault
	for _, c := range r.faults {
		if c.times != 0 && strings.Contains(req.URL.Path, c.match) {
			f = c
			if c.times > 0 {
				c.times--
			}
			break
		}
	}
	r.mu.Unlock()

	if r.user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.user || p != r.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	if f != nil {
		switch f.kind {
		case faultStatus:
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			w.WriteHeader(f.status)
			return
		case faultReset:
			hj, _ := w.(http.Hijacker)
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
			return
		case faultDelay:
			select {
			case <-time.After(f.delay):
			case <-req.Context().Done():
				return
			}
		case faultTruncate, faultCorrupt:
			rec := httptest.NewRecorder()
			r.inner.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			if f.kind == faultCorrupt {
				body = append([]byte(nil), body...)
				if len(body) > 0 {
					body[len(body)/2] ^= 0xff
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
				return
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body[:len(body)/2])
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
			hj, _ := w.(http.Hijacker)
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
			return
		}
	}
	if strings.HasSuffix(req.URL.Path, "/tags/list") && req.Method == http.MethodGet {
		r.serveTags(w, req)
		return
	}
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
		w = countingWriter{ResponseWriter: w, r: r}
	}
	r.inner.ServeHTTP(w, req)
}

// serveTags pages the tag list with Link headers (ggcr's registry has none), ignoring the
// client's n so that pagination is always exercised.
func (r *testRegistry) serveTags(w http.ResponseWriter, req *http.Request) {
	inner := req.Clone(req.Context())
	inner.URL.RawQuery = ""
	rec := httptest.NewRecorder()
	r.inner.ServeHTTP(rec, inner)
	if rec.Code != http.StatusOK {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	var list struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	tags := list.Tags
	if last := req.URL.Query().Get("last"); last != "" {
		i := 0
		for i < len(tags) && tags[i] <= last {
			i++
		}
		tags = tags[i:]
	}
	if len(tags) > r.pageSize {
		next := url.Values{"n": {fmt.Sprint(r.pageSize)}, "last": {tags[r.pageSize-1]}}
		w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, req.URL.Path, next.Encode()))
		tags = tags[:r.pageSize]
	}
	list.Tags = tags
	_ = json.NewEncoder(w).Encode(list)
}

// --- image builders ---

func tarLayer(t testing.TB, files map[string]string, order ...string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if len(order) == 0 {
		for k := range files {
			order = append(order, k)
		}
		sortStrings(order)
	}
	for _, n := range order {
		body := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o444, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func rawTarLayer(t testing.TB, b []byte) v1.Layer {
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func image(t testing.TB, arch string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func randomLayer(t testing.TB, size int64) v1.Layer {
	l, err := random.Layer(size, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func index(t testing.TB, imgs map[string]v1.Image) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	var arches []string
	for a := range imgs {
		arches = append(arches, a)
	}
	sortStrings(arches)
	for _, a := range arches {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: imgs[a], Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}}})
	}
	return idx
}

func digestOf(t testing.TB, d interface{ Digest() (v1.Hash, error) }) string {
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func (r *testRegistry) push(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	n, err := name.ParseReference(r.host() + "/" + ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(n, img, r.pushOpts()...); err != nil {
		t.Fatal(err)
	}
}

func (r *testRegistry) pushIndex(t testing.TB, ref string, idx v1.ImageIndex) {
	t.Helper()
	n, err := name.ParseReference(r.host() + "/" + ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(n, idx, r.pushOpts()...); err != nil {
		t.Fatal(err)
	}
}

func (r *testRegistry) pushOpts() []remote.Option {
	if r.user == "" {
		return nil
	}
	return []remote.Option{remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: r.user, Password: r.pass}))}
}

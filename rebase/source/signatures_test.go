package source

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

// rawManifest lets remote.Put push a manifest's bytes as they are.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// pushSig attaches cosign layers to repo@digest as cosign does: the sha256-<hex>.sig tag.
func (r *testRegistry) pushSig(t testing.TB, repo, digest string, layers ...testsign.Layer) {
	t.Helper()
	raw, blobs := testsign.SigManifest(layers)
	repoRef, err := name.NewRepository(r.host() + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blobs {
		if err := remote.WriteLayer(repoRef, static.NewLayer(b, types.MediaType("application/octet-stream")), r.pushOpts()...); err != nil {
			t.Fatal(err)
		}
	}
	tag, err := name.NewTag(r.host() + "/" + repo + ":" + provenance.SigTag(digest))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Put(tag, rawManifest{raw, types.OCIManifestSchema1}, r.pushOpts()...); err != nil {
		t.Fatal(err)
	}
}

// sigSource is a Source pulling the canonical registry.redhat.io/lvms4 from the test registry
// under another name (mirror/lvms), as a mirror may: the identity stays the upstream one.
func sigSource(t *testing.T, r *testRegistry, cache string, offline bool, mirrors ...Mirror) *Source {
	t.Helper()
	if mirrors == nil {
		mirrors = []Mirror{{Source: "registry.redhat.io/lvms4", Mirror: r.host() + "/mirror/lvms"}}
	}
	s, err := New(Options{CacheDir: cache, Offline: offline, Mirrors: mirrors, Retry: RetryOptions{Attempts: 2, Backoff: 1, MaxBackoff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCosignThroughMirror: the .sig tag is read where the image is (a mirror under another
// name), the identity checked is the canonical one; a signature naming the mirror fails; a
// warm cache sends no request; offline reads the cache; a missing .sig is no signature.
func TestCosignThroughMirror(t *testing.T) {
	keys := testsign.Shared()
	r := newTestRegistry(t)
	img := image(t, "amd64", randomLayer(t, 64))
	r.push(t, "mirror/lvms/op:v1", img)
	d := digestOf(t, img)
	const canonical = "registry.redhat.io/lvms4/op"
	r.pushSig(t, "mirror/lvms/op", d, testsign.Cosign(keys.Cosign, d, canonical+":v1"))
	policy, err := provenance.ParsePolicy(keys.Policy(), "p.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	subject := provenance.Subject{Role: "lvms_operator x86_64", Repository: canonical, Digest: d}
	cache := t.TempDir()
	verify := func(s *Source) (provenance.Record, error) {
		v, err := provenance.New(provenance.Options{Policy: policy}, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Verify(context.Background(), subject)
	}
	rec, err := verify(sigSource(t, r, cache, false))
	if err != nil || rec.Status != provenance.StatusSigned || rec.Signatures[0].Identity != canonical+":v1" {
		t.Fatalf("through the mirror: %+v, %v", rec, err)
	}
	r.reset()
	if _, err := verify(sigSource(t, r, cache, false)); err != nil || len(r.requests) != 0 {
		t.Errorf("warm: %v after %d requests %v, want none", err, len(r.requests), r.requests)
	}
	if _, err := verify(sigSource(t, r, cache, true)); err != nil {
		t.Errorf("offline from the cache: %v", err)
	}
	if _, err := verify(sigSource(t, r, t.TempDir(), true)); err == nil || !strings.Contains(err.Error(), "signatures could not be fetched") {
		t.Errorf("offline with an empty cache must be no verdict: %v", err)
	}

	// A signature naming where the mirror serves it is not the upstream identity.
	img2 := image(t, "amd64", randomLayer(t, 64))
	r.push(t, "mirror/lvms/op:v2", img2)
	d2 := digestOf(t, img2)
	r.pushSig(t, "mirror/lvms/op", d2, testsign.Cosign(keys.Cosign, d2, r.host()+"/mirror/lvms/op:v2"))
	subject.Digest = d2
	if _, err := verify(sigSource(t, r, t.TempDir(), false)); err == nil || !strings.Contains(err.Error(), "does not match registry.redhat.io/lvms4/op") {
		t.Errorf("mirror identity accepted: %v", err)
	}

	// No .sig tag: no signature (not a failure to fetch), and no tag list is read.
	img3 := image(t, "amd64", randomLayer(t, 64))
	r.push(t, "mirror/lvms/op:v3", img3)
	subject.Digest = digestOf(t, img3)
	r.reset()
	if _, err := verify(sigSource(t, r, t.TempDir(), false)); err == nil || !strings.Contains(err.Error(), ": no signature;") || r.count("GET", "/tags/list") != 0 {
		t.Errorf("unsigned: %v (requests %v)", err, r.requests)
	}
}

// storeServer is a signature store on loopback: files by path, a status for everything else,
// and a request count.
type storeServer struct {
	srv    *httptest.Server
	files  map[string][]byte
	status int
	hits   atomic.Int32
	handle func(w http.ResponseWriter, r *http.Request) bool
}

func newStore(t *testing.T) *storeServer {
	s := &storeServer{files: map[string][]byte{}, status: http.StatusNotFound}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if s.handle != nil && s.handle(w, r) {
			return
		}
		if b, ok := s.files[r.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		w.WriteHeader(s.status)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// TestStoreSignatures: the store is reached through a --mirror of its canonical URL; a found
// signature is cached (a warm run asks nothing); 404 is "no signature"; a store that fails is
// retried and then an error, never "unsigned"; a gigabyte under a signature's name is refused
// at the cap, with or without a Content-Length.
func TestStoreSignatures(t *testing.T) {
	keys := testsign.Shared()
	st := newStore(t)
	host := strings.TrimPrefix(st.srv.URL, "http://")
	d := "sha256:" + strings.Repeat("a", 64)
	const relRepo = "quay.io/openshift-release-dev/ocp-release"
	sig, err := testsign.Atomic(keys.Release, d, relRepo+":4.18.12-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	st.files["/storage.googleapis.com/openshift-release/official/signatures/openshift/release/sha256="+strings.Repeat("a", 64)+"/signature-1"] = sig
	mirrors := []Mirror{{Source: "storage.googleapis.com", Mirror: host + "/storage.googleapis.com"}, {Source: "mirror.openshift.com", Mirror: host + "/mirror.openshift.com"}}
	policy, _ := provenance.ParsePolicy(keys.Policy(), "p.json", nil)
	subject := provenance.Subject{Role: "payload x86_64", Repository: relRepo, Digest: d}
	cache := t.TempDir()
	verify := func(cache string, offline bool) (provenance.Record, error) {
		r := newTestRegistry(t)
		v, _ := provenance.New(provenance.Options{Policy: policy}, sigSource(t, r, cache, offline, mirrors...))
		return v.Verify(context.Background(), subject)
	}
	rec, err := verify(cache, false)
	if err != nil || rec.Signatures[0].Store != provenance.OfficialStore || rec.Signatures[0].N != 1 {
		t.Fatalf("%+v, %v", rec, err)
	}
	st.hits.Store(0)
	if _, err := verify(cache, false); err != nil || st.hits.Load() != 0 {
		t.Errorf("warm: %v after %d store requests", err, st.hits.Load())
	}
	if _, err := verify(cache, true); err != nil {
		t.Errorf("offline: %v", err)
	}

	subject.Digest = "sha256:" + strings.Repeat("b", 64)
	st.hits.Store(0)
	if _, err := verify(t.TempDir(), false); err == nil || !strings.Contains(err.Error(), ": no signature;") || st.hits.Load() != 2 {
		t.Errorf("404 in both stores: %v after %d requests (want 2: the official store and its mirror)", err, st.hits.Load())
	}

	st.status = http.StatusServiceUnavailable
	st.hits.Store(0)
	_, err = verify(t.TempDir(), false)
	if err == nil || !strings.Contains(err.Error(), "signatures could not be fetched") || !strings.Contains(err.Error(), "503") || st.hits.Load() < 3 {
		t.Errorf("store down: %v after %d requests (want retries, then no verdict)", err, st.hits.Load())
	}

	for name, h := range map[string]func(w http.ResponseWriter, r *http.Request) bool{
		"content-length": func(w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Content-Length", fmt.Sprint(int64(1)<<30))
			w.WriteHeader(http.StatusOK)
			return true
		},
		"streamed": func(w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusOK)
			chunk := make([]byte, 1<<20)
			for i := 0; i < 1024; i++ {
				if _, err := w.Write(chunk); err != nil {
					return true
				}
			}
			return true
		},
	} {
		st.handle = h
		st.hits.Store(0)
		_, err := verify(t.TempDir(), false)
		if err == nil || !strings.Contains(err.Error(), "more than a signature may have") || st.hits.Load() != 2 {
			t.Errorf("1 GB signature (%s): %v after %d requests (want one per store, refused at the cap, not retried)", name, err, st.hits.Load())
		}
	}
}

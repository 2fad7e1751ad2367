package source

import (
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// TestPlainHTTPOnlyForLoopbackOrInsecure: ggcr falls back to plain http for RFC 1918
// addresses and *.localhost on its own; without --insecure-registry nothing but loopback may
// be spoken to without TLS (credentials would cross the network in clear).
func TestPlainHTTPOnlyForLoopbackOrInsecure(t *testing.T) {
	w := newWorld(t, worldOpts{})
	addr := w.reg.host()
	for _, host := range []string{"10.1.2.3:5000", "192.168.7.8:5000", "registry.localhost:5000", "127.evil.example:5000"} {
		image := host + "/" + operatorRep + "@" + w.operatorList
		o := Options{CacheDir: t.TempDir(), Transport: testregistry.DialTo(addr), Retry: RetryOptions{Attempts: 1}}
		_, err := newSource(t, o).ImageDigests(ctx(t), image, []string{"x86_64"})
		if err == nil {
			t.Errorf("%s without --insecure-registry: pulled over plain http", host)
		}
		o.Insecure = []string{host}
		if _, err := newSource(t, o).ImageDigests(ctx(t), image, []string{"x86_64"}); err != nil {
			t.Errorf("%s with --insecure-registry: %v", host, err)
		}
	}

}

// --offline with an empty cache says which cache it looked in, for tags and digests alike.
func TestOfflineEmptyCacheNamesCache(t *testing.T) {
	o := Options{CacheDir: filepath.Join(t.TempDir(), "empty-cache"), Offline: true}
	s := newSource(t, o)
	for _, ref := range []string{releaseRepo + ":4.18.5-x86_64", releaseRepo + "@sha256:" + strings.Repeat("a", 64)} {
		_, err := s.ImageDigests(ctx(t), ref, []string{"x86_64"})
		if err == nil || !strings.Contains(err.Error(), "offline") || !strings.Contains(err.Error(), o.CacheDir) || !strings.Contains(err.Error(), ref) {
			t.Errorf("%s: error %v, want it to name the ref, the cache and offline", ref, err)
		}
	}
	if _, err := s.Resolve(ctx(t), "4.18", ""); err == nil || !strings.Contains(err.Error(), o.CacheDir) {
		t.Errorf("Resolve: error %v, want it to name the cache", err)
	}
}

// --insecure-registry for one TLS registry does not relax verification for another, nor
// for a --mirror that points at the other one.
func TestInsecureDoesNotLeak(t *testing.T) {
	start := func() (*httptest.Server, string) {
		srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv, strings.TrimPrefix(srv.URL, "https://")
	}
	a, hostA := start()
	b, hostB := start()
	img := image(t, "amd64", randomLayer(t, 64))
	for _, s := range []*httptest.Server{a, b} {
		ref := must(name.ParseReference(strings.TrimPrefix(s.URL, "https://") + "/lvms4/op:v1"))
		if err := remote.Write(ref, img, remote.WithTransport(s.Client().Transport)); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{CacheDir: t.TempDir(), Retry: RetryOptions{Attempts: 1}, Insecure: []string{hostA}}
	for _, tc := range []struct {
		image  string
		mirror string
		ok     bool
	}{
		{image: hostA + "/lvms4/op:v1", ok: true},
		{image: hostB + "/lvms4/op:v1"},
		{image: "registry.example.com/lvms4/op:v1", mirror: hostA, ok: true},
		{image: "registry.example.com/lvms4/op:v1", mirror: hostB},
	} {
		o.Mirrors = nil
		if tc.mirror != "" {
			o.Mirrors = []Mirror{{Source: "registry.example.com", Mirror: tc.mirror}}
		}
		_, err := newSource(t, o).ImageDigests(ctx(t), tc.image, []string{"x86_64"})
		if (err == nil) != tc.ok {
			t.Errorf("%s (mirror %q): error %v, want success %v", tc.image, tc.mirror, err, tc.ok)
		}
	}
	o.Mirrors = nil
	if _, err := newSource(t, o).FetchURL(ctx(t), "https://"+hostB+"/v2/"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("FetchURL to the other host: error %v, want a certificate failure", err)
	}
}

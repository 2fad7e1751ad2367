package source

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
)

// dialTo returns a transport that connects every request to addr whatever its host, so
// tests can give a loopback server a private-network or look-alike name.
func dialTo(addr string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// TestPlainHTTPOnlyForLoopbackOrInsecure: ggcr falls back to plain http for RFC 1918
// addresses and *.localhost on its own; without --insecure-registry nothing but loopback may
// be spoken to without TLS (credentials would cross the network in clear).
func TestPlainHTTPOnlyForLoopbackOrInsecure(t *testing.T) {
	w := newWorld(t, worldOpts{})
	addr := w.reg.host()
	for _, host := range []string{"10.1.2.3:5000", "192.168.7.8:5000", "registry.localhost:5000", "127.evil.example:5000"} {
		image := host + "/" + operatorRep + "@" + w.operatorList
		o := Options{CacheDir: t.TempDir(), Transport: dialTo(addr), Retry: RetryOptions{Attempts: 1}}
		_, err := newSource(t, o).ImageDigests(ctx(t), image, []string{"x86_64"})
		if err == nil {
			t.Errorf("%s without --insecure-registry: pulled over plain http", host)
		}
		o.Insecure = []string{host}
		if _, err := newSource(t, o).ImageDigests(ctx(t), image, []string{"x86_64"}); err != nil {
			t.Errorf("%s with --insecure-registry: %v", host, err)
		}
	}

	// The same rule for FetchURL, including a host that only looks like 127.x.
	srv := newFileServer(t, "/x.tar.gz", string(fixtures.GitHubArchive("x", "")))
	o := Options{CacheDir: t.TempDir(), Transport: dialTo(srv.host()), Retry: RetryOptions{Attempts: 1}}
	for _, u := range []string{"http://127.evil.example/x.tar.gz", "http://10.1.2.3/x.tar.gz"} {
		if _, err := newSource(t, o).FetchURL(ctx(t), u); err == nil || !strings.Contains(err.Error(), "plain http") {
			t.Errorf("FetchURL(%s): error %v, want a plain http refusal", u, err)
		}
	}
	if rc, err := newSource(t, o).FetchURL(ctx(t), "http://127.0.0.2/x.tar.gz"); err != nil {
		t.Errorf("loopback 127.0.0.2: %v", err)
	} else {
		rc.Close()
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

// A token in a URL's query (pre-signed or private downloads) stays out of errors and logs.
func TestFetchURLNeverEchoesQueryToken(t *testing.T) {
	const secret = "tok3n-hunter2"
	srv := newFileServer(t, "/x.tar.gz", string(fixtures.GitHubArchive("x", "")))
	srv.inject(fault{match: "/x.tar.gz", kind: faultStatus, status: 503, times: -1})
	var logs bytes.Buffer
	o := Options{CacheDir: t.TempDir(), Retry: RetryOptions{Attempts: 2, Backoff: time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, u := range []string{
		srv.srv.URL + "/x.tar.gz?token=" + secret,              // HTTP 503, retried
		"http://127.0.0.1:1/x.tar.gz?token=" + secret,          // connection refused
		"https://example.com/x.tar.gz?token=" + secret + "%zz", // malformed
		"ftp://example.com/x?token=" + secret,                  // wrong scheme
	} {
		for _, offline := range []bool{false, true} {
			o.Offline = offline
			_, err := newSource(t, o).FetchURL(ctx(t), u)
			if err == nil {
				t.Fatalf("FetchURL(%q) succeeded", u)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("offline=%v: FetchURL(%q) error leaks the token: %v", offline, u, err)
			}
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("log leaks the token:\n%s", logs.String())
	}
}

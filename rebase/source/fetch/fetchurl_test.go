package fetch

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// TestFetchURL: a download survives a 502, is served from the cache offline, and plain
// http to a non-loopback host or a 404 fail.
func TestFetchURL(t *testing.T) {
	body := string(fixtures.GitHubArchive("x-abc", ""))
	srv := fileServer(t, "/github.com/openshift/x/archive/abc.tar.gz", body, http.StatusBadGateway, 1)
	o := Options{Cache: cache.New(t.TempDir()), Retry: transport.RetryOptions{Attempts: 3, Backoff: time.Millisecond}}
	var s *Client
	u := srv.URL + "/github.com/openshift/x/archive/abc.tar.gz"
	for _, offline := range []bool{false, true} {
		o.Offline = offline
		s = newClient(t, o, nil)
		rc, err := s.FetchURL(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(got) != body {
			t.Fatalf("offline=%v: body %d bytes", offline, len(got))
		}
	}
	if _, err := s.FetchURL(context.Background(), "http://example.com/x.tar.gz"); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Fatalf("error %v", err)
	}
	o.Offline = false
	if _, err := newClient(t, o, nil).FetchURL(context.Background(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("error %v", err)
	}
}

// TestFetchURLNeverEchoesSecrets: a password in a URL's user info, or a token in its query
// (pre-signed or private downloads), stays out of errors and logs, whether url.Parse accepts
// the URL (errors use the redacted URL) or rejects it (its error would repeat the raw string).
func TestFetchURLNeverEchoesSecrets(t *testing.T) {
	srv := fileServer(t, "/x.tar.gz", string(fixtures.GitHubArchive("x", "")), http.StatusServiceUnavailable, -1)
	const password, token = "hunter2", "tok3n-hunter2"
	tests := []struct {
		name, secret string
		urls         []string
	}{
		{"password", password, []string{
			"https://user:" + password + "@127.0.0.1:1/x.tar.gz",             // connection refused
			"http://user:" + password + "@example.com/x.tar.gz",              // plain http refused
			"ftp://user:" + password + "@example.com/x",                      // scheme refused
			"https://user:" + password + "@example.com/%zz",                  // bad escape
			"https://user:" + password + "@[::1/x",                           // bad host
			" https://user:" + password + "@example.com/x",                   // leading space
			"https://user:" + password + "/x@example.com/archive/abc.tar.gz", // '/' in the password
			"user:" + password + "@example.com/x",                            // no scheme
		}},
		{"query token", token, []string{
			srv.URL + "/x.tar.gz?token=" + token,                  // HTTP 503, retried
			"http://127.0.0.1:1/x.tar.gz?token=" + token,          // connection refused
			"https://example.com/x.tar.gz?token=" + token + "%zz", // malformed
			"ftp://example.com/x?token=" + token,                  // wrong scheme
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			o := Options{Retry: transport.RetryOptions{Attempts: 2, Backoff: time.Millisecond},
				Log: slog.New(slog.NewTextHandler(&logs, nil))}
			for _, u := range tc.urls {
				for _, offline := range []bool{false, true} {
					o.Offline = offline
					_, err := newClient(t, o, nil).FetchURL(context.Background(), u)
					if err == nil {
						t.Fatalf("FetchURL(%q) succeeded", u)
					}
					if strings.Contains(err.Error(), tc.secret) {
						t.Errorf("offline=%v: FetchURL(%q) error leaks the %s: %v", offline, u, tc.name, err)
					}
				}
			}
			if strings.Contains(logs.String(), tc.secret) {
				t.Errorf("log leaks the %s:\n%s", tc.name, logs.String())
			}
		})
	}
}

// TestFetchURLPlainHTTPOnlyForLoopbackOrInsecure: FetchURL speaks plain http only to
// loopback hosts (a host that only looks like 127.x is not one) or insecure ones, whatever
// the URL says. (Registry pulls: rebase/source's TestPlainHTTPOnlyForLoopbackOrInsecure.)
func TestFetchURLPlainHTTPOnlyForLoopbackOrInsecure(t *testing.T) {
	srv := fileServer(t, "/x.tar.gz", string(fixtures.GitHubArchive("x", "")), 0, 0)
	o := Options{Retry: transport.RetryOptions{Attempts: 1}}
	base := testregistry.DialTo(strings.TrimPrefix(srv.URL, "http://"))
	for _, u := range []string{"http://127.evil.example/x.tar.gz", "http://10.1.2.3/x.tar.gz"} {
		if _, err := newClient(t, o, base).FetchURL(context.Background(), u); err == nil || !strings.Contains(err.Error(), "plain http") {
			t.Errorf("FetchURL(%s): error %v, want a plain http refusal", u, err)
		}
	}
	if rc, err := newClient(t, o, base).FetchURL(context.Background(), "http://127.0.0.2/x.tar.gz"); err != nil {
		t.Errorf("loopback 127.0.0.2: %v", err)
	} else {
		rc.Close()
	}
}

// fileServer serves body at path (404 elsewhere); the first failures requests for path (all
// of them when failures < 0) are answered with status instead.
func fileServer(t *testing.T, path, body string, status, failures int) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		fail := failures != 0
		if failures > 0 {
			failures--
		}
		mu.Unlock()
		if fail {
			w.WriteHeader(status)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

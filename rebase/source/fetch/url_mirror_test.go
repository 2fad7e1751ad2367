package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
)

func TestMirrorURL(t *testing.T) {
	s := &Client{opts: Options{
		Mirrors: []mirror.Mirror{{Source: "github.com", Mirror: "127.0.0.1:5000/github.com"}, {Source: "example.com/a", Mirror: "mirror.example.org/b"},
			{Source: "lookalike.example", Mirror: "127.evil.example/gh"}},
		Insecure: []string{"insecure.example:8443"},
	}}
	cases := []struct{ in, want string }{
		{"https://github.com/openshift/x/archive/abc.tar.gz", "http://127.0.0.1:5000/github.com/openshift/x/archive/abc.tar.gz"},
		// A mirror to a host that only looks like loopback keeps https.
		{"https://lookalike.example/o/r/archive/x.tar.gz", "https://127.evil.example/gh/o/r/archive/x.tar.gz"},
		{"https://example.com/a/file.tgz?x=1", "https://mirror.example.org/b/file.tgz?x=1"},
		{"https://example.com/ab/file.tgz", "https://example.com/ab/file.tgz"},
		{"https://other.example/file", "https://other.example/file"},
	}
	for _, tc := range cases {
		u, err := parseURLForTest(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.mirrorURL(u).String(); got != tc.want {
			t.Errorf("mirrorURL(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestFetchURLThroughMirror fetches a canonical https URL from a loopback mirror.
func TestFetchURLThroughMirror(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/github.com/openshift/op/archive/c0ffee.tar.gz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(fixtures.GitHubArchive("op-c0ffee", "")) // a failed write is the client's error to report
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	s := newClient(t, Options{Mirrors: []mirror.Mirror{{Source: "github.com", Mirror: host + "/github.com"}}}, nil)
	rc, err := s.FetchURL(context.Background(), "https://github.com/openshift/op/archive/c0ffee.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if !bytes.Equal(b, fixtures.GitHubArchive("op-c0ffee", "")) {
		t.Fatalf("got %q", b)
	}
}

func parseURLForTest(s string) (*url.URL, error) { return url.Parse(s) }

// TestFetchURLCommitCached serves an archive named by a commit id from the cache on the
// second fetch, and fetches a mutable URL again.
func TestFetchURLCommitCached(t *testing.T) {
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[r.URL.Path]++
		_, _ = w.Write(fixtures.GitHubArchive("x-0123456789abcdef0123456789abcdef01234567", "")) // the client reports a failed write
	}))
	defer srv.Close()
	s := newClient(t, Options{}, nil)
	commit := srv.URL + "/archive/0123456789abcdef0123456789abcdef01234567.tar.gz"
	branch := srv.URL + "/archive/main.tar.gz"
	for i := 0; i < 2; i++ {
		for _, u := range []string{commit, branch} {
			rc, err := s.FetchURL(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if len(b) == 0 {
				t.Fatalf("got %q", b)
			}
		}
	}
	if hits["/archive/0123456789abcdef0123456789abcdef01234567.tar.gz"] != 1 || hits["/archive/main.tar.gz"] != 2 {
		t.Fatalf("requests %v: want the commit archive once and the branch archive twice", hits)
	}
}

// TestFetchURLSizeCap refuses a body over MaxImageSize, with or without a Content-Length.
func TestFetchURLSizeCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = io.WriteString(w, strings.Repeat("x", 4096)) // the client stops reading at its cap
	}))
	defer srv.Close()
	s := newClient(t, Options{MaxImageSize: 1024}, nil)
	for _, p := range []string{"/sized", "/chunked"} {
		_, err := s.FetchURL(context.Background(), srv.URL+p)
		if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
			t.Errorf("%s: error %v, want the size cap", p, err)
		}
	}
}

package transport

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLimitTransport: tags/list pages, manifests and the /v2/ ping's answer are cut at their
// bound whether or not the server announces a length; other bodies (blobs, bounded by their
// descriptor) and bodies at the bound pass.
func TestLimitTransport(t *testing.T) {
	const bound = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := bound + 1
		if strings.Contains(r.URL.Path, "/exact/") {
			n = bound
		}
		if strings.Contains(r.URL.Path, "/chunked/") {
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	client := &http.Client{Transport: &limitTransport{inner: http.DefaultTransport, tagList: bound, manifestSize: bound, ping: bound}}
	for _, tc := range []struct {
		path    string
		limited bool
	}{
		{"/v2/a/b/tags/list", true},
		{"/v2/chunked/b/tags/list", true},
		{"/v2/a/b/manifests/sha256:00", true},
		{"/v2/chunked/b/manifests/v1", true},
		{"/v2/exact/b/manifests/v1", false},
		{"/v2/exact/b/tags/list", false},
		{"/v2/a/b/blobs/sha256:00", false},
		{"/v2/", true},
		{"/v2", true},
	} {
		resp, err := client.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		var le *LimitError
		if got := errors.As(err, &le); got != tc.limited || (!tc.limited && err != nil) {
			t.Errorf("%s: read %d bytes, err %v; want limited %v", tc.path, len(b), err, tc.limited)
		}
	}
}

// TestBlobLongerThanDescriptor: a blob body is read up to its descriptor's size and no
// further.
func TestBlobLongerThanDescriptor(t *testing.T) {
	b := &limitBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", 1<<20))), left: 10, err: &LimitError{Reason: "blob larger"}}
	n, err := io.Copy(io.Discard, b)
	var le *LimitError
	if !errors.As(err, &le) || n > 11 {
		t.Fatalf("copied %d bytes, err %v; want a LimitError after at most 11 bytes", n, err)
	}
}

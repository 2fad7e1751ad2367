package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// endless writes a body that never ends (a JSON-looking prefix, then spaces) until the
// client stops reading or 256 MiB were written, and adds what it wrote to *n.
func endless(w http.ResponseWriter, n *atomic.Int64) {
	chunk := []byte(strings.Repeat(" ", 32<<10))
	if k, err := w.Write([]byte(`{"errors": [{"code": "X", "message": "`)); err == nil {
		n.Add(int64(k))
	}
	for n.Load() < 256<<20 {
		k, err := w.Write(chunk)
		n.Add(int64(k))
		if err != nil {
			return
		}
	}
}

// TestResponseBodiesAreBounded: every answer a registry gives is read to a bound, whatever
// its status and however long its body: an error answer (cut at 16 KiB by the transport, so
// its status still says what happened), the /v2/ ping whatever its status (64 KiB, transport:
// go-containerregistry drains it to its end), a bearer token (go-containerregistry's 64 KiB),
// a manifest (4 MiB, transport). Each case is a registry that never ends one answer: the pull
// fails naming the registry and what went wrong, and the client stopped reading long before
// the body's 256 MiB (what was written counts the socket's buffers too, hence the loose
// bound). Before the transport cut error answers, a /v2/ answering 403 or 401 with an endless
// body was read until --timeout.
func TestResponseBodiesAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		// endless reports whether the request gets the endless body, and with which status.
		endless func(r *http.Request) (int, bool)
		want    string
	}{
		{"error answer to a manifest", func(r *http.Request) (int, bool) {
			return http.StatusNotFound, strings.Contains(r.URL.Path, "/manifests/")
		}, `tag "tag" not found`},
		{"error answer to the ping", func(r *http.Request) (int, bool) {
			return http.StatusForbidden, r.URL.Path == "/v2/"
		}, "registry ping (/v2/) answer larger than 65536 bytes"},
		{"token", func(r *http.Request) (int, bool) {
			return http.StatusOK, r.URL.Path == "/token"
		}, "body exceeds 65536 byte limit"},
		{"error answer to the token", func(r *http.Request) (int, bool) {
			return http.StatusUnauthorized, r.URL.Path == "/token"
		}, "401 Unauthorized"},
		// The ping's body is drained and its error dropped by go-containerregistry: the
		// bounded ping lets the pull go on to the manifest, which this registry lacks.
		{"ping", func(r *http.Request) (int, bool) {
			return http.StatusOK, r.URL.Path == "/v2/"
		}, `tag "tag" not found`},
		{"manifest", func(r *http.Request) (int, bool) {
			return http.StatusOK, strings.Contains(r.URL.Path, "/manifests/")
		}, "manifest larger than 4194304 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if code, ok := tc.endless(r); ok {
					w.WriteHeader(code)
					endless(w, &written)
					return
				}
				switch {
				case r.URL.Path == "/v2/" && strings.Contains(tc.name, "token"):
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test"`, srv.URL))
					w.WriteHeader(http.StatusUnauthorized)
				case r.URL.Path == "/v2/":
					w.WriteHeader(http.StatusOK)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			ref := host + "/endless/image:tag"
			c := newClient(t, Options{Insecure: []string{host}, Retry: transport.RetryOptions{Attempts: 1}}, nil)
			_, _, err := c.Extract(context.Background(), Request{Kind: "test image", Ref: ref, Prefixes: []string{"data/"}}, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), host) {
				t.Errorf("%v, want an error naming %s and %q", err, host, tc.want)
			}
			if n := written.Load(); n >= 64<<20 {
				t.Errorf("the client read %d bytes of an endless answer: unbounded", n)
			}
		})
	}
}

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// uncapped is how go-containerregistry v0.22.1 builds its clients: a CheckRedirect that
// allows every same-host redirect, without the standard library's cap of 10.
func uncapped(*http.Request, []*http.Request) error { return nil }

// TestRedirectsAreBounded: whichever client sends the request — ours, or one like
// go-containerregistry's that follows same-host redirects without a cap — a redirect loop is
// an error naming the URL after one round, and a chain of distinct redirects stops after
// MaxRedirects; neither is retried. A short chain is followed.
func TestRedirectsAreBounded(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch {
		case strings.HasPrefix(r.URL.Path, "/self"):
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/pingpong/a"):
			http.Redirect(w, r, "/pingpong/b", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/pingpong/b"):
			http.Redirect(w, r, "/pingpong/a", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/"))
			if n == 0 {
				_, _ = io.WriteString(w, "end")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusMovedPermanently)
		}
	}))
	defer srv.Close()
	rt := New(nil, Options{Retry: RetryOptions{}.WithDefaults()})
	for _, tc := range []struct {
		path string
		max  int64  // requests the server may see
		want string // "" = success
	}{
		{"/self?token=secret", 2, "redirect loop"},
		{"/pingpong/a", 3, "redirect loop"},
		{"/chain/100", MaxRedirects + 1, fmt.Sprintf("more than %d redirects", MaxRedirects)},
		{"/chain/3", 4, ""},
	} {
		for name, c := range map[string]*http.Client{
			"ours": {Transport: rt, CheckRedirect: CheckRedirect},
			"ggcr": {Transport: rt, CheckRedirect: uncapped},
		} {
			requests.Store(0)
			// A deadline far past a bounded chain, so that an unbounded one fails the test
			// with its request count instead of hanging it.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+tc.path, nil)
			resp, err := c.Do(req)
			cancel()
			if err == nil {
				resp.Body.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s client, %s: %v", name, tc.path, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s client, %s: %v, want %q", name, tc.path, err, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), srv.URL):
				t.Errorf("%s client, %s: %v does not name the URL", name, tc.path, err)
			}
			var re *RedirectError
			if tc.want != "" && (!errors.As(err, &re) || Retryable(err) || strings.Contains(re.Error(), "secret")) {
				t.Errorf("%s client, %s: %v is not a RedirectError, is retried or shows the query", name, tc.path, err)
			}
			if n := requests.Load(); n > tc.max {
				t.Errorf("%s client, %s: %d requests, want at most %d", name, tc.path, n, tc.max)
			}
		}
	}
}

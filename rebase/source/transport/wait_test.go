package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRetryWaitsEndWithTheContext: every wait between two attempts — a server's Retry-After,
// the backoff after a 503 or after a reset connection — ends when the run's context does
// (SIGINT, SIGTERM, --timeout), not when the delay is over. The delays here are an hour:
// a wait that ignored the context would hold the test until go test's own timeout.
func TestRetryWaitsEndWithTheContext(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
	}{
		{"Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		}},
		{"backoff after 503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }},
		{"backoff after a reset", func(w http.ResponseWriter) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var asked atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if asked.Add(1) == 1 {
					// Cancel once the answer is on its way: the transport is then in its wait.
					defer time.AfterFunc(50*time.Millisecond, cancel)
				}
				tc.answer(w)
			}))
			defer srv.Close()
			rt := New(nil, Options{Retry: RetryOptions{Attempts: 3, Backoff: time.Hour, MaxBackoff: time.Hour}.WithDefaults()})
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v2/x/blobs/sha256:00", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("status %d, want the round trip to end with its context", resp.StatusCode)
			}
			if ctx.Err() == nil {
				t.Fatalf("%v: ended before the context did", err)
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (no attempt after the context ended)", n)
			}
			if tc.name == "Retry-After" && !errors.Is(err, context.Canceled) {
				t.Errorf("%v, want context.Canceled", err)
			}
		})
	}
}

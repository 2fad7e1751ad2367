package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Rejected credentials and an untrusted server certificate fail at once instead of being
// retried until the deadline like an API server that is still starting.
func TestConnectFailsFastOnPermanentErrors(t *testing.T) {
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
	}))
	defer unauthorized.Close()
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer untrusted.Close()

	for name, cfg := range map[string]*rest.Config{
		"401":            {Host: unauthorized.URL, BearerToken: "wrong"},
		"untrusted cert": {Host: untrusted.URL},
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions(cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := Connect(ctx, o)
			if err == nil || !strings.Contains(err.Error(), "rejected the connection") || !strings.Contains(err.Error(), cfg.Host) {
				t.Fatalf("connect: %v, want a rejection naming %s", err, cfg.Host)
			}
			if ctx.Err() != nil {
				t.Fatalf("connect retried until the deadline (%s) instead of failing fast", time.Since(start))
			}
		})
	}
}

package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// retryTransport retries requests that failed in ways worth retrying: 408, 429 and 5xx
// answers (honouring Retry-After up to MaxBackoff) and connection resets. Truncated or
// corrupted bodies are retried one level up, where the body is read and verified.
//
// ggcr v0.22.1's own retry list does include 429, but it ignores Retry-After; it is turned
// off (see remoteOptions) so retries are not multiplied.
type retryTransport struct {
	inner http.RoundTripper
	opts  RetryOptions
	log   *slog.Logger
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryableErr reports whether a transport or body-read error is transient.
func retryableErr(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// backoff is the delay before attempt n (1-based retries).
func (o RetryOptions) backoff(n int) time.Duration {
	d := o.Backoff << (n - 1)
	if d > o.MaxBackoff || d <= 0 {
		d = o.MaxBackoff
	}
	return d
}

// retryAfter parses a Retry-After header (seconds or HTTP date), capped.
func retryAfter(h string, max time.Duration) (time.Duration, bool) {
	if h == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.Atoi(h); err == nil {
		d = time.Duration(secs) * time.Second
		if secs > int(max/time.Second) {
			// Checked before multiplying would matter: a huge value overflows to ~0.
			d = max
		}
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	} else {
		return 0, false
	}
	if d < 0 {
		d = 0
	}
	if d > max {
		d = max
	}
	return d, true
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		if attempt > 1 && req.Body != nil {
			if req.GetBody == nil {
				return nil, errors.New("cannot retry a request whose body cannot be replayed")
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = b
		}
		resp, err := t.inner.RoundTrip(req)
		last := attempt >= t.opts.Attempts
		switch {
		case err != nil:
			if last || !retryableErr(err) {
				return nil, err
			}
			d := t.opts.backoff(attempt)
			t.log.Warn("retrying request", "url", safeURL(req.URL), "error", err, "in", d)
			if serr := sleepCtx(ctx, d); serr != nil {
				return nil, err
			}
		case retryableStatus(resp.StatusCode) && !last:
			d := t.opts.backoff(attempt)
			if ra, ok := retryAfter(resp.Header.Get("Retry-After"), t.opts.MaxBackoff); ok {
				d = ra
			}
			t.log.Warn("retrying request", "url", safeURL(req.URL), "status", resp.StatusCode, "in", d)
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if serr := sleepCtx(ctx, d); serr != nil {
				return nil, serr
			}
		default:
			return resp, nil
		}
	}
}

// insecureTransport enforces the TLS policy on every request, whoever built it (ggcr's
// ping, a redirect, FetchURL): plain http only to loopback hosts and --insecure-registry
// hosts, and unverified TLS only to the latter. ggcr on its own also falls back to plain
// http for RFC 1918 addresses and *.localhost names, which would send credentials in clear.
type insecureTransport struct {
	secure, insecure http.RoundTripper
	hosts            []string
}

func newInsecureTransport(base http.RoundTripper, hosts []string) http.RoundTripper {
	t := &insecureTransport{secure: base, insecure: base, hosts: hosts}
	if ht, ok := base.(*http.Transport); ok && len(hosts) > 0 {
		in := ht.Clone()
		if in.TLSClientConfig == nil {
			in.TLSClientConfig = &tls.Config{}
		}
		in.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // only for hosts the user named with --insecure-registry
		t.insecure = in
	}
	return t
}

func (t *insecureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	insecure := isInsecureHost(t.hosts, req.URL.Host)
	if req.URL.Scheme == "http" && !insecure && !loopbackHost(req.URL.Hostname()) {
		return nil, fmt.Errorf("refusing plain http to %s: only loopback hosts and --insecure-registry hosts are reached without TLS", req.URL.Host)
	}
	if insecure {
		return t.insecure.RoundTrip(req)
	}
	return t.secure.RoundTrip(req)
}

// loopbackHost reports whether host (without port) is localhost or a loopback address,
// where plain http needs no --insecure-registry. "127.example.com" is not one.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

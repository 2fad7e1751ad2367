// Package transport is the HTTP layer under every registry and download request of
// lvms-rebase: retries with backoff and Retry-After, a stall timeout, the TLS policy
// (plain http only to loopback and insecure hosts) and bounds on the bodies read into
// memory. Callers build one RoundTripper with New and retry whole operations with Attempt.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/httplog"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// retryTransport retries requests that failed in ways worth retrying: 408, 429 and 5xx
// answers (honouring Retry-After up to MaxBackoff) and connection resets. Truncated or
// corrupted bodies are retried one level up, where the body is read and verified.
//
// ggcr v0.22.1's own retry list does include 429, but it ignores Retry-After; it is turned
// off (see the fetch package's remote options) so retries are not multiplied.
type retryTransport struct {
	inner http.RoundTripper
	opts  RetryOptions
	log   *slog.Logger
}

// RetryOptions bound the retries of requests and blob downloads.
type RetryOptions struct {
	// Attempts per request or blob, including the first (default 5).
	Attempts int
	// Backoff is the first delay, doubled per attempt (default 200ms).
	Backoff time.Duration
	// MaxBackoff caps one delay, including a server's Retry-After (default 30s).
	MaxBackoff time.Duration
	// StallTimeout fails a request that receives nothing for this long, waiting for the
	// headers or in the body (default 1m): a registry that accepts and stalls must not hold
	// a run until --timeout.
	StallTimeout time.Duration
}

// WithDefaults fills the fields left zero with the defaults.
func (o RetryOptions) WithDefaults() RetryOptions {
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = 200 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Minute
	}
	return o
}

// Options configure New.
type Options struct {
	// Insecure lists HOST[:PORT]s reachable over plain HTTP or unverified TLS.
	Insecure []string
	// Retry tunes retries; it should have its defaults filled (RetryOptions.WithDefaults).
	Retry RetryOptions
	// MaxTagListBytes and MaxManifestSize bound a tags/list page and a manifest.
	MaxTagListBytes, MaxManifestSize int64
	// Log receives the retry warnings (optional).
	Log *slog.Logger
}

// New wraps base (http.DefaultTransport when nil) with the TLS policy, retries, body bounds,
// the redirect bound, and the request log of -v 6 and up.
func New(base http.RoundTripper, o Options) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Each attempt is logged at -v 6 and up (internal/httplog), as it goes on the wire.
	rt := &retryTransport{inner: httplog.New(newInsecureTransport(base, o.Insecure), log), opts: o.Retry, log: log}
	return &redirectTransport{inner: &limitTransport{inner: rt, tagList: o.MaxTagListBytes, manifestSize: o.MaxManifestSize, ping: maxPingBody}}
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Retryable reports whether a transport or body-read error is transient.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	// A refused connection is not retried: nothing listens there, and waiting will not
	// change that within a run. A stall already waited StallTimeout.
	var st *stallError
	var re *RedirectError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &st) || errors.As(err, &re) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Delays is the sequence of delays for one retry budget: each Step is the delay before the
// next attempt, Backoff doubling up to MaxBackoff. Steps is the budget's attempts; once the
// cap is reached wait.Backoff keeps returning it, so the number of attempts is counted by
// the caller, never cut short by the cap.
func (o RetryOptions) Delays() *wait.Backoff {
	return &wait.Backoff{Duration: min(o.Backoff, o.MaxBackoff), Factor: 2, Cap: o.MaxBackoff, Steps: o.Attempts}
}

// RetryAfter parses a Retry-After header (seconds or HTTP date), capped.
func RetryAfter(h string, max time.Duration) (time.Duration, bool) {
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

// RoundTrip sends req with one retry budget (Attempts) for this request. Retryable errors
// that exhaust it come back as an *ExhaustedError, so that the operation-level retry in
// Attempt does not spend another budget on the same failure.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	delays := t.opts.Delays()
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
		resp, err := t.roundTripOnce(req)
		last := attempt >= t.opts.Attempts
		switch {
		case err != nil:
			if !Retryable(err) {
				return nil, err
			}
			if last {
				return nil, &ExhaustedError{attempts: attempt, err: err}
			}
			d := delays.Step()
			t.log.Warn("retrying request", "url", SafeURL(req.URL), "error", err, "attempt", attempt, "of", t.opts.Attempts, "in", d)
			if serr := Sleep(ctx, d); serr != nil {
				return nil, err
			}
		case retryableStatus(resp.StatusCode) && !last:
			d := delays.Step()
			if ra, ok := RetryAfter(resp.Header.Get("Retry-After"), t.opts.MaxBackoff); ok {
				d = ra
			}
			t.log.Warn("retrying request", "url", SafeURL(req.URL), "status", resp.StatusCode, "attempt", attempt, "of", t.opts.Attempts, "in", d)
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if serr := Sleep(ctx, d); serr != nil {
				return nil, serr
			}
		default:
			return resp, nil
		}
	}
}

// roundTripOnce sends one attempt under the stall timeout: the attempt is cancelled when
// nothing arrives for StallTimeout, waiting for the headers or between body reads.
func (t *retryTransport) roundTripOnce(req *http.Request) (*http.Response, error) {
	stall := t.opts.StallTimeout
	if stall <= 0 {
		return t.inner.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	resp, err := t.inner.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel(nil)
		if errors.Is(context.Cause(ctx), errStalled) {
			return nil, &stallError{url: SafeURL(req.URL), d: stall}
		}
		return nil, err
	}
	timer.Reset(stall)
	resp.Body = &stallBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, timer: timer, stall: stall, url: SafeURL(req.URL)}
	return resp, nil
}

var errStalled = errors.New("stalled")

// stallError is a request that received nothing for StallTimeout.
type stallError struct {
	url string
	d   time.Duration
}

func (e *stallError) Error() string {
	return fmt.Sprintf("%s: no data for %s (the server accepted the request and stalled)", e.url, e.d)
}

// stallBody re-arms the stall timer on every read and turns its cancellation into a
// stallError.
type stallBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	stall  time.Duration
	url    string
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.stall)
	}
	if err != nil && errors.Is(context.Cause(b.ctx), errStalled) {
		return n, &stallError{url: b.url, d: b.stall}
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.timer.Stop()
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// ExhaustedError is a transient failure that used up its request's retry budget.
type ExhaustedError struct {
	attempts int
	err      error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("giving up after %d attempts: %v", e.attempts, e.err)
}

func (e *ExhaustedError) Unwrap() error { return e.err }

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
	insecure := InsecureHost(t.hosts, req.URL.Host)
	if req.URL.Scheme == "http" && !insecure && !Loopback(req.URL.Hostname()) {
		return nil, fmt.Errorf("refusing plain http to %s: only loopback hosts and %s hosts are reached without TLS", req.URL.Host, option.InsecureRegistry)
	}
	if insecure {
		return t.insecure.RoundTrip(req)
	}
	return t.secure.RoundTrip(req)
}

// Loopback reports whether host (without port) is localhost or a loopback address,
// where plain http needs no --insecure-registry. "127.example.com" is not one.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InsecureHost reports whether host (HOST[:PORT]) is one of the insecure hosts.
func InsecureHost(insecure []string, host string) bool {
	for _, h := range insecure {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// SafeURL renders u for errors and logs: user info, query values, fragment and path
// parameters masked, since pre-signed and private download URLs carry tokens there.
func SafeURL(u *url.URL) string { return redact.URL(u.String()) }

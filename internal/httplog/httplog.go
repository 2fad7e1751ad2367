// Package httplog logs HTTP round trips at kubectl's verbosities, as slog records at V(n)
// (slog level -n), each a plain message: at -v 6 one line per request (method, URL, status
// and the time to the response headers), at -v 7 the request and response headers, at -v 8
// the start of each response body (1024 bytes; 10240 at -v 9, up to MaxBody at -v 10).
// Secrets never print: URLs and headers are masked by applier/redact (the one home of that
// rule), request bodies are never shown, and a response body is shown only when it is JSON,
// YAML or plain text that is not the answer of a token exchange (a POST, a request to a realm
// a challenge named, a request for a scope) nor of a redirect, and names no credential field;
// the URLs in it are masked too.
package httplog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
)

// The verbosities, as kubectl's.
const (
	LevelURL     = slog.Level(-6)
	LevelHeaders = slog.Level(-7)
	LevelBody    = slog.Level(-8)
	// LevelLongBody shows 10240 bytes of a body, LevelWholeBody up to MaxBody.
	LevelLongBody  = slog.Level(-9)
	LevelWholeBody = slog.Level(-10)
)

// MaxBody caps what -v 10 shows of one body: registry bodies worth reading are manifests and
// tag lists, and a body is kept in memory until it is logged.
const MaxBody = 1 << 20

// New returns a round tripper that sends requests through inner and logs them to log at the
// levels above. When log enables none of them it only checks the level.
func New(inner http.RoundTripper, log *slog.Logger) http.RoundTripper {
	if log == nil {
		return inner
	}
	return &transport{inner: inner, log: log}
}

type transport struct {
	inner http.RoundTripper
	log   *slog.Logger
	// realms are the token endpoints challenges named (scheme, host and path).
	realms sync.Map
}

func (t *transport) logf(ctx context.Context, l slog.Level, format string, args ...any) {
	t.log.Log(ctx, l, fmt.Sprintf(format, args...))
}

// RoundTrip sends req and logs it.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !t.log.Enabled(ctx, LevelURL) {
		return t.inner.RoundTrip(req)
	}
	u := redact.URL(req.URL.String())
	headers := t.log.Enabled(ctx, LevelHeaders)
	if headers {
		t.logf(ctx, LevelHeaders, "%s %s", req.Method, u)
		t.headers(ctx, "Request Headers:", req.Header)
	}
	start := time.Now()
	resp, err := t.inner.RoundTrip(req)
	took := round(time.Since(start))
	if err != nil {
		t.logf(ctx, LevelURL, "%s %s failed after %s: %v", req.Method, u, took, redact.Err(err))
		return resp, err
	}
	if headers {
		t.logf(ctx, LevelHeaders, "Response Status: %s in %s", resp.Status, took)
		t.headers(ctx, "Response Headers:", resp.Header)
	} else {
		t.logf(ctx, LevelURL, "%s %s %s in %s", req.Method, u, resp.Status, took)
	}
	t.noteRealms(resp.Header)
	if t.log.Enabled(ctx, LevelBody) && resp.Body != nil {
		resp.Body = t.bodyLog(ctx, req, resp)
	}
	return resp, nil
}

// headers logs a title and each header, sorted by name, its value masked by redact.Header.
func (t *transport) headers(ctx context.Context, title string, h http.Header) {
	t.logf(ctx, LevelHeaders, "%s", title)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[name] {
			t.logf(ctx, LevelHeaders, "    %s: %s", name, redact.Header(name, v))
		}
	}
}

// realmRE finds the realm of a Bearer challenge.
var realmRE = regexp.MustCompile(`(?i)realm="([^"]*)"`)

// noteRealms remembers the token endpoints a response's challenges name.
func (t *transport) noteRealms(h http.Header) {
	for _, c := range h.Values("Www-Authenticate") {
		for _, m := range realmRE.FindAllStringSubmatch(c, -1) {
			t.realms.Store(endpoint(m[1]), true)
		}
	}
}

// endpoint is a URL without its query and fragment.
func endpoint(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return strings.TrimSuffix(u, "/")
}

// tokenExchange reports whether req may be answered with a credential: a POST (an OAuth2
// token request), a request to a realm a challenge named, one asking for a scope (the
// registry token protocol's GET), or a path that names a token or auth endpoint.
func (t *transport) tokenExchange(req *http.Request) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return true
	}
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	if _, ok := t.realms.Load(endpoint(u.String())); ok {
		return true
	}
	q := req.URL.Query()
	if q.Has("scope") || q.Has("service") || q.Has("grant_type") {
		return true
	}
	p := strings.ToLower(strings.TrimSuffix(req.URL.Path, "/"))
	for _, end := range []string{"/token", "/auth", "/oauth2/token", "/login"} {
		if strings.HasSuffix(p, end) {
			return true
		}
	}
	return strings.Contains(p, "/oauth") || strings.Contains(p, "/openid-connect/")
}

// credentialRE finds a field that holds a credential: a JSON field, or a form's.
var credentialRE = regexp.MustCompile(`(?i)"(access_token|refresh_token|id_token|token|password|passwd|secret|client_secret|auth|credentials?)"\s*:|` +
	`(^|[&\s])(access_token|refresh_token|id_token|token|password|passwd|client_secret)=`)

// secretKindRE finds a Kubernetes object whose content is a credential (the API's answers
// through apply's client).
var secretKindRE = regexp.MustCompile(`"kind"\s*:\s*"(Secret|SecretList|TokenRequest|TokenReview)"`)

// textual reports whether a content type is text a person can read.
func textual(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/plain" ||
		mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml"
}

// urlRE finds the URLs in a body that is shown, each masked by redact.URL (a signed URL's
// query is a credential for as long as it is valid).
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\\]+`)

func maskURLs(s string) string { return urlRE.ReplaceAllStringFunc(s, redact.URL) }

// limit is how much of a body the level shows.
func (t *transport) limit(ctx context.Context) int {
	switch {
	case t.log.Enabled(ctx, LevelWholeBody):
		return MaxBody
	case t.log.Enabled(ctx, LevelLongBody):
		return 10240
	}
	return 1024
}

// bodyLog wraps resp's body so that its start is logged once it has been read (or closed).
func (t *transport) bodyLog(ctx context.Context, req *http.Request, resp *http.Response) io.ReadCloser {
	b := &body{ReadCloser: resp.Body, t: t, ctx: ctx, contentType: resp.Header.Get("Content-Type")}
	switch {
	case t.tokenExchange(req):
		b.withheld = "the answer of a token exchange"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		b.withheld = "a redirect, which may repeat its signed location"
	case !textual(b.contentType):
		b.withheld = "not text"
	default:
		b.limit = t.limit(ctx)
	}
	return b
}

// body is a response body whose start is kept (up to limit bytes) and logged at EOF or Close.
type body struct {
	io.ReadCloser
	t           *transport
	ctx         context.Context
	contentType string
	withheld    string // why the body is not shown, or ""
	limit       int
	mu          sync.Mutex // Close may come from another goroutine than Read
	kept        bytes.Buffer
	n           int64
	once        sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.n += int64(n)
	if room := b.limit - b.kept.Len(); room > 0 {
		b.kept.Write(p[:min(n, room)])
	}
	b.mu.Unlock()
	if err == io.EOF {
		b.log(true)
	}
	return n, err
}

func (b *body) Close() error {
	b.log(false)
	return b.ReadCloser.Close()
}

// log logs the body once, unless it was empty: its start, or why it is not shown, with the
// bytes read.
func (b *body) log(eof bool) {
	b.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.n == 0 {
			return // HEAD, 204, a challenge: nothing to show
		}
		read := fmt.Sprintf("%d bytes", b.n)
		if !eof {
			read = fmt.Sprintf("%d bytes read before it was closed", b.n)
		}
		ct := b.contentType
		if ct == "" {
			ct = "no content type"
		}
		switch {
		case b.withheld != "":
			b.t.logf(b.ctx, LevelBody, "Response Body: not shown (%s; %s, %s)", b.withheld, ct, read)
		case credentialRE.Match(b.kept.Bytes()) || secretKindRE.Match(b.kept.Bytes()):
			b.t.logf(b.ctx, LevelBody, "Response Body: not shown (it names a credential field; %s, %s)", ct, read)
		case b.n > int64(b.kept.Len()):
			b.t.logf(b.ctx, LevelBody, "Response Body: %s [truncated, %s]", maskURLs(b.kept.String()), read)
		default:
			b.t.logf(b.ctx, LevelBody, "Response Body: %s", maskURLs(b.kept.String()))
		}
	})
}

// round shows a duration to the millisecond, or to the microsecond under one.
func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

package transport

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Defaults of the bounds a registry cannot exceed (Options.MaxTagPages, MaxTagListBytes,
// MaxManifestSize). Real repositories are far below them: quay.io's ocp-release has some
// ten thousand tags (a few hundred KB of names), manifests are a few KB.
const (
	DefaultMaxTagPages     = 1000
	DefaultMaxTagListBytes = 16 << 20
	DefaultMaxManifestSize = 4 << 20
	// maxPingBody bounds what is read of a /v2/ answer (go-containerregistry's ping reads the
	// body to its end, however long; a registry's is empty or a few bytes of JSON).
	maxPingBody = 64 << 10
)

// LimitError is a registry answer over one of the bounds: too many tags/list pages, a
// pagination link that repeats, a tag list or manifest larger than allowed.
type LimitError struct {
	// URL is the request that went past a bound ("" for the pagination bounds, which the
	// caller names by repository).
	URL string
	// Reason says which bound was hit.
	Reason string
}

func (e *LimitError) Error() string {
	if e.URL == "" {
		return e.Reason
	}
	return e.URL + ": " + e.Reason
}

// limitTransport bounds the bodies that are read into memory whole: tags/list pages and
// manifests (distribution-spec paths). A Content-Length over the bound fails the first read;
// a body without one fails when it passes the bound. Neither is retried.
type limitTransport struct {
	inner                       http.RoundTripper
	tagList, manifestSize, ping int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	var limit int64
	var what string
	switch p := req.URL.Path; {
	case strings.HasPrefix(p, "/v2/") && strings.HasSuffix(p, "/tags/list"):
		limit, what = t.tagList, "tag list page"
	case strings.HasPrefix(p, "/v2/") && strings.Contains(p, "/manifests/"):
		limit, what = t.manifestSize, "manifest"
	case (p == "/v2/" || p == "/v2") && t.ping > 0:
		limit, what = t.ping, "registry ping (/v2/) answer"
	default:
		return resp, nil
	}
	b := &limitBody{ReadCloser: resp.Body, left: limit, err: &LimitError{URL: SafeURL(req.URL), Reason: fmt.Sprintf("%s larger than %d bytes", what, limit)}}
	if resp.ContentLength > limit {
		// Fail the first read rather than the round trip: net/http would wrap the error in
		// a url.Error repeating the URL.
		b.left = -1
	}
	resp.Body = b
	return resp, nil
}

// LimitBody returns rc failing with err once more than n bytes are read: a body longer
// than its descriptor says is wrong whatever follows.
func LimitBody(rc io.ReadCloser, n int64, err error) io.ReadCloser {
	return &limitBody{ReadCloser: rc, left: n, err: err}
}

// limitBody fails a read that would pass its bound.
type limitBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, b.err
	}
	return n, err
}

// IsLimit reports whether err is a bound a registry went past (never retried).
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

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
	// maxPingBody bounds what is read of a /v2/ answer, whatever its status
	// (go-containerregistry's ping drains the body to its end, however long, even after its
	// error check kept 64 KiB; a registry's is empty or a few bytes of JSON).
	maxPingBody = 64 << 10
	// maxErrorBody is how much of an error answer (status 300 and up) is read: the status
	// says what happened, the body only adds words (a registry's JSON error is well under
	// 1 KiB, a proxy's HTML page a few KB); the rest is cut off, not waited for.
	maxErrorBody = 16 << 10
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

// limitTransport bounds the bodies that are read into memory whole or drained: tags/list
// pages, manifests (distribution-spec paths) and the /v2/ ping fail past their bound (a
// Content-Length over it fails the first read; a body without one fails when it passes it;
// neither is retried); any other error answer is cut off at maxErrorBody. Blobs are bounded
// by their descriptors (LimitBody) and URL downloads by their caller.
type limitTransport struct {
	inner                       http.RoundTripper
	tagList, manifestSize, ping int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	var limit int64
	var what string
	switch p := req.URL.Path; {
	case (p == "/v2/" || p == "/v2") && t.ping > 0:
		limit, what = t.ping, "registry ping (/v2/) answer"
	case resp.StatusCode >= http.StatusMultipleChoices:
		resp.Body = &cutBody{ReadCloser: resp.Body, left: maxErrorBody}
		return resp, nil
	case resp.StatusCode != http.StatusOK:
		return resp, nil
	case strings.HasPrefix(p, "/v2/") && strings.HasSuffix(p, "/tags/list"):
		limit, what = t.tagList, "tag list page"
	case strings.HasPrefix(p, "/v2/") && strings.Contains(p, "/manifests/"):
		limit, what = t.manifestSize, "manifest"
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

// cutBody ends an error answer's body after left bytes, as if the answer ended there: its
// status is the error, and the words kept are enough to say it.
type cutBody struct {
	io.ReadCloser
	left int64
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// IsLimit reports whether err is a bound a registry went past (never retried).
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

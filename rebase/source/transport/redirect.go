package transport

import (
	"fmt"
	"net/http"
	"slices"
)

// MaxRedirects bounds the redirects one request follows: the standard library's own bound,
// which go-containerregistry v0.22.1's clients drop (their CheckRedirect allows every
// same-host redirect, so a registry redirecting to itself was asked ~2,400 times a second
// until --timeout).
const MaxRedirects = 10

// RedirectError is a request whose redirects loop or go on past MaxRedirects. It is never
// retried: the registry will answer the same way again.
type RedirectError struct {
	// URL is the request that started the chain; Loop, for a loop, the URL met twice. Both
	// redacted.
	URL, Loop string
}

func (e *RedirectError) Error() string {
	if e.Loop != "" {
		if e.Loop == e.URL {
			return fmt.Sprintf("%s: redirect loop (the server redirects the URL to itself)", e.URL)
		}
		return fmt.Sprintf("%s: redirect loop (back to %s)", e.URL, e.Loop)
	}
	return fmt.Sprintf("%s: more than %d redirects", e.URL, MaxRedirects)
}

// CheckRedirect is the http.Client.CheckRedirect of the clients lvms-rebase builds: a
// redirect to a URL already requested is a loop, and at most MaxRedirects are followed. The
// transport (New) applies the same check to every request, whoever's client sent it.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	next := req.URL.String()
	for _, r := range via {
		if r.URL.String() == next {
			return &RedirectError{URL: SafeURL(via[0].URL), Loop: SafeURL(req.URL)}
		}
	}
	if len(via) > MaxRedirects {
		return &RedirectError{URL: SafeURL(via[0].URL)}
	}
	return nil
}

// redirectTransport applies CheckRedirect to requests that follow a redirect (the chain is
// the request's Response links), so that a client without a bound, go-containerregistry's,
// is bounded too.
type redirectTransport struct{ inner http.RoundTripper }

func (t *redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil {
		var via []*http.Request
		for r := req.Response; r != nil && r.Request != nil; r = r.Request.Response {
			via = append(via, r.Request)
		}
		slices.Reverse(via)
		if err := CheckRedirect(req, via); err != nil {
			return nil, err
		}
	}
	return t.inner.RoundTrip(req)
}

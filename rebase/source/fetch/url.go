package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/gitcommit"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// FetchURL downloads an http(s) URL (the snapshot-assets tarball) through the retrying
// transport, stores it in the cache by content digest and returns a reader over the cached
// copy. Offline, it serves the last download of that URL. Plain http is allowed only for
// loopback hosts and --insecure-registry hosts.
func (c *Client) FetchURL(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	canonical, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the raw URL, and its cause may quote part of it ("invalid port
		// \":pw\""), so with userinfo present only the redacted URL is shown.
		if red := redact.URL(rawURL); red != rawURL {
			return nil, fmt.Errorf("URL %q is malformed (parse details withheld: the URL carries credentials)", red)
		}
		return nil, fmt.Errorf("URL %q: %w", rawURL, err)
	}
	u := c.mirrorURL(canonical)
	switch u.Scheme {
	case "https":
	case "http":
		if !transport.Loopback(u.Hostname()) && !transport.InsecureHost(c.opts.Insecure, u.Host) {
			return nil, fmt.Errorf("URL %s: plain http is only allowed for loopback or %s hosts", transport.SafeURL(u), option.InsecureRegistry)
		}
	default:
		// An opaque URL ("user:pw@host/x" reads as scheme "user") has no User to redact.
		return nil, fmt.Errorf("URL %s: want http(s)", transport.SafeURL(u))
	}
	idx := c.cache.URLPath(rawURL)
	if rc, err := c.cachedURL(canonical, u, idx); rc != nil || err != nil {
		return rc, err
	}
	var f *os.File
	err = c.attempt(ctx, transport.SafeURL(u), func() error {
		var err error
		f, err = c.download(ctx, canonical, u, idx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", transport.SafeURL(u), err)
	}
	return f, nil
}

// cachedURL serves a URL from the cache when that is as good as a download: offline always
// (an error when it is missing), online when the URL names a full commit id (the
// snapshot-assets archive cannot change). A cached copy is verified again before use. It
// returns nil, nil when the URL must be downloaded.
func (c *Client) cachedURL(canonical, u *url.URL, idx string) (io.ReadCloser, error) {
	if !c.opts.Offline && !commitURL.MatchString(canonical.Path) {
		return nil, nil
	}
	b, err := safefile.ReadFile(idx, safefile.Options{})
	if err != nil {
		if c.opts.Offline {
			return nil, fmt.Errorf("URL %s is not in the cache %s (offline)", transport.SafeURL(u), c.cache.Dir())
		}
		return nil, nil
	}
	h, err := v1.NewHash(strings.TrimSpace(string(b)))
	if err == nil {
		var p string
		if p, err = c.cache.Get(h); err == nil && p == "" {
			err = fmt.Errorf("cached content %s missing", h)
		}
		if err == nil {
			// A copy cached before verification existed may be bad.
			if err = c.verifyDownload(canonical, p); err == nil {
				c.tally(blobStat{cached: true})
				f, err := openCached(p)
				if err != nil {
					return nil, err
				}
				return f, nil
			}
		}
	}
	if c.opts.Offline {
		return nil, fmt.Errorf("URL %s: cached copy unusable (offline): %w", transport.SafeURL(u), err)
	}
	return nil, nil // online: download again
}

type httpStatusError struct {
	url  string
	code int
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.url, e.code, http.StatusText(e.code))
}

// archivePath matches the URL paths of tarballs, which are verified before caching.
var archivePath = regexp.MustCompile(`\.(tar\.gz|tgz|tar)$`)

// corruptDownloadError is a download that did not verify; it is retried like a truncated body.
type corruptDownloadError struct {
	url string
	err error
}

func (e *corruptDownloadError) Error() string {
	return fmt.Sprintf("URL %s: not a readable archive: %v", e.url, e.err)
}

// verifyDownload checks a downloaded or cached file of URL u: a tarball must read to its end
// (gzip and tar intact) and, when the URL names a commit, say it holds that commit (its pax
// global header or top directory) — a mirror serving another release's archive is an error.
func (c *Client) verifyDownload(u *url.URL, file string) error {
	if !archivePath.MatchString(u.Path) {
		return nil
	}
	f, err := openCached(file)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := gitcommit.Archive(f, c.opts.MaxImageSize)
	if err != nil {
		return &corruptDownloadError{url: transport.SafeURL(u), err: err}
	}
	m := commitURL.FindStringSubmatch(u.Path)
	if m == nil {
		return nil
	}
	want := strings.Trim(m[0], "/")
	want = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(want, ".tar.gz"), ".tgz"), ".zip")
	if got == "" {
		return fmt.Errorf("URL %s: the archive names no commit (no pax comment, no <repo>-<commit> top directory); expected %s", transport.SafeURL(u), want)
	}
	if !gitcommit.Same(got, want) {
		return fmt.Errorf("URL %s: the archive holds commit %s, expected %s", transport.SafeURL(u), got, want)
	}
	return nil
}

// commitURL matches a path with a full 40-hex commit id as one segment or file name.
var commitURL = regexp.MustCompile(`(^|/)[0-9a-f]{40}(\.tar\.gz|\.tgz|\.zip)?(/|$)`)

// mirrorURL applies --mirror prefix rewrites to a URL's host/path, as for image
// repositories: --mirror github.com=127.0.0.1:5000/github.com serves the snapshot-assets
// archive from a local copy while outputs keep recording the canonical URL. A mirror host on
// loopback or in --insecure-registry is spoken to over plain http.
func (c *Client) mirrorURL(u *url.URL) *url.URL {
	loc := u.Host + u.EscapedPath()
	m := mirror.Rewrite(c.opts.Mirrors, loc)
	if m == loc {
		return u
	}
	host, path, _ := strings.Cut(m, "/")
	out := *u
	out.Host, out.Path, out.RawPath = host, "/"+path, ""
	if p, err := url.PathUnescape(out.Path); err == nil {
		out.Path = p
	}
	if transport.Loopback(out.Hostname()) || transport.InsecureHost(c.opts.Insecure, out.Host) {
		out.Scheme = "http"
	}
	return &out
}

// tooLargeError reports a download over --max-image-size.
type tooLargeError struct {
	url   string
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("URL %s: body larger than %d bytes (%s)", e.url, e.limit, option.MaxImageSize)
}

// download fetches u once into the cache, verified; the caller retries.
func (c *Client) download(ctx context.Context, canonical, u *url.URL, idx string) (*os.File, error) {
	tmp, err := c.getToTemp(ctx, u)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	// Only a download that verifies is cached: a corrupted one would fail every later run.
	if err := c.verifyDownload(canonical, tmp.Name()); err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	h, _, err := v1.SHA256(tmp)
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	p, n, err := c.cache.Put(h, tmp)
	if err != nil {
		return nil, err
	}
	c.tally(blobStat{fetched: n}) // a URL download counts in Totals like a blob
	if err := c.cache.WriteFile(idx, []byte(h.String()+"\n")); err != nil {
		return nil, err
	}
	return openCached(p)
}

// openCached opens a downloaded or cached file, verified or about to be: a regular file
// (not through a link, not a FIFO swapped in), streamed whatever its size.
func openCached(p string) (*os.File, error) {
	f, _, err := safefile.Open(p, safefile.Options{Max: safefile.NoSizeCap})
	return f, err
}

// getToTemp GETs u into a temporary file, refusing bodies over --max-image-size (a hostile
// or misconfigured server must not fill the disk; not retried) and short bodies.
func (c *Client) getToTemp(ctx context.Context, u *url.URL) (*os.File, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		// url.Error prints the URL with its query, which may carry a token.
		var re *transport.RedirectError
		if errors.As(err, &re) {
			return nil, re // it names the URL
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("GET %s: %w", transport.SafeURL(u), ue.Err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &httpStatusError{url: transport.SafeURL(u), code: resp.StatusCode}
	}
	limit := c.opts.MaxImageSize
	if resp.ContentLength > limit {
		return nil, &tooLargeError{url: transport.SafeURL(u), limit: limit}
	}
	tmp, err := os.CreateTemp("", "lvms-rebase-url-")
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
	case n > limit:
		err = &tooLargeError{url: transport.SafeURL(u), limit: limit}
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		err = fmt.Errorf("short body (%d of %d bytes): %w", n, resp.ContentLength, io.ErrUnexpectedEOF)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return tmp, nil
}

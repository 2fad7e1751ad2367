package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	remotetransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// Signatures are small: a signature store's signature-N and a cosign payload are under 2 KiB.
// Their fetches go through the same transport, mirrors, retries and cache as every other, and
// are capped far below the image bounds.

// Small is a small file fetched by URL.
type Small struct {
	// Data is the body; Found is false when the server answered 404.
	Data  []byte
	Found bool
	// Cached says Data came from the cache (a re-fetch with fresh may differ).
	Cached bool
}

// FetchSmall GETs an http(s) URL (a signature store's file) of at most max bytes through
// mirrors (--mirror rewrites its host/path as an image's repository) and the retrying
// transport. A 404 is Found=false, any other failure an error: a store that cannot be read is
// no answer. Unless fresh, the last download of the URL is served from the cache (what it
// holds is verified by whoever reads it); offline it must be there.
func (c *Client) FetchSmall(ctx context.Context, rawURL string, max int64, fresh bool) (Small, error) {
	canonical, err := url.Parse(rawURL)
	if err != nil {
		return Small{}, fmt.Errorf("URL %q is malformed", redact.URL(rawURL))
	}
	u := c.mirrorURL(canonical)
	if err := c.checkScheme(u); err != nil {
		return Small{}, err
	}
	idx := c.cache.URLPath(rawURL)
	if !fresh || c.opts.Offline {
		if b, ok := c.cachedSmall(idx, max); ok {
			c.tally(blobStat{cached: true})
			return Small{Data: b, Found: true, Cached: true}, nil
		}
		if c.opts.Offline {
			return Small{}, fmt.Errorf("URL %s is not in the cache %s (offline)", transport.SafeURL(u), c.cache.Dir())
		}
	}
	var out Small
	err = c.attempt(ctx, transport.SafeURL(u), func() error {
		var err error
		out, err = c.getSmall(ctx, u, max)
		return err
	})
	if err != nil {
		return Small{}, fmt.Errorf("fetching %s: %w", transport.SafeURL(u), err)
	}
	if !out.Found {
		return out, nil
	}
	h, _, err := v1.SHA256(bytes.NewReader(out.Data))
	if err != nil {
		return Small{}, err
	}
	if _, _, err := c.cache.Put(h, bytes.NewReader(out.Data)); err != nil {
		return Small{}, err
	}
	c.tally(blobStat{fetched: int64(len(out.Data))})
	if err := c.cache.WriteFile(idx, []byte(h.String()+"\n")); err != nil {
		return Small{}, err
	}
	return out, nil
}

// checkScheme allows https, and plain http only to loopback and --insecure-registry hosts.
func (c *Client) checkScheme(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if transport.Loopback(u.Hostname()) || transport.InsecureHost(c.opts.Insecure, u.Host) {
			return nil
		}
		return fmt.Errorf("URL %s: plain http is only allowed for loopback or insecure-registry hosts", transport.SafeURL(u))
	}
	return fmt.Errorf("URL %s: want http(s)", transport.SafeURL(u))
}

// cachedSmall reads the cached copy of a URL's last download, verified by its digest.
func (c *Client) cachedSmall(idx string, max int64) ([]byte, bool) {
	b, err := safefile.ReadFile(idx, safefile.Options{})
	if err != nil {
		return nil, false
	}
	h, err := v1.NewHash(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, false
	}
	data, ok := c.cache.ReadSmall(h)
	if !ok || int64(len(data)) > max {
		return nil, false
	}
	return data, true
}

// getSmall GETs u once: 404 is not found; a body over max fails (not retried: a store
// serving a gigabyte under a signature's name is broken or hostile, and asking again will
// not shrink it).
func (c *Client) getSmall(ctx context.Context, u *url.URL, max int64) (Small, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Small{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return Small{}, fmt.Errorf("GET %s: %w", transport.SafeURL(u), ue.Err)
		}
		return Small{}, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Small{}, nil
	case resp.StatusCode != http.StatusOK:
		return Small{}, &httpStatusError{url: transport.SafeURL(u), code: resp.StatusCode}
	case resp.ContentLength > max:
		return Small{}, &transport.LimitError{Reason: fmt.Sprintf("%d bytes, more than a signature may have (%d)", resp.ContentLength, max)}
	}
	// safefile: a download, bounded by max.
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case err != nil:
		return Small{}, err
	case int64(len(data)) > max:
		return Small{}, &transport.LimitError{Reason: fmt.Sprintf("more than %d bytes, more than a signature may have", max)}
	case resp.ContentLength >= 0 && int64(len(data)) != resp.ContentLength:
		return Small{}, fmt.Errorf("short body (%d of %d bytes): %w", len(data), resp.ContentLength, io.ErrUnexpectedEOF)
	}
	return Small{Data: data, Found: true}, nil
}

// Attached is a manifest attached to an image by tag (cosign's sha256-<hex>.sig) with its
// layers' blobs.
type Attached struct {
	// Found is false when the tag (or the digest asked for) does not exist.
	Found bool
	// Cached says everything came from the cache.
	Cached bool
	// Digest is the manifest's digest.
	Digest string
	Layers []AttachedLayer
}

// AttachedLayer is one layer of an attached manifest, read whole.
type AttachedLayer struct {
	MediaType   string
	Digest      string
	Annotations map[string]string
	Data        []byte
}

// MaxAttachedLayers bounds the layers of an attached manifest (cosign adds one per signature).
const MaxAttachedLayers = 64

// Attached fetches repository:tag, or repository@digest when digest is set, and each of its
// layers (at most maxBlob bytes each, as declared and as read). Unless fresh, a tag the cache
// recorded whose manifest and blobs it holds is served without a request; offline only from
// the cache. A tag or digest the registry does not have is Found=false.
func (c *Client) Attached(ctx context.Context, repository, tag, digest string, maxBlob int64, fresh bool) (Attached, error) {
	ref := repository + ":" + tag
	if digest != "" {
		ref = repository + "@" + digest
	}
	r, err := parseRef(ref)
	if err != nil {
		return Attached{}, err
	}
	if !fresh && digest == "" {
		if a, ok := c.cachedAttached(r, maxBlob); ok {
			return a, nil
		}
	}
	m, err := c.attachedManifest(ctx, r)
	if err != nil || m == nil {
		return Attached{}, err
	}
	mf, err := v1.ParseManifest(bytes.NewReader(m.raw))
	if err != nil {
		return Attached{}, fmt.Errorf("%s (%s): parsing manifest: %w", ref, m.digest, err)
	}
	if len(mf.Layers) > MaxAttachedLayers {
		return Attached{}, &transport.LimitError{URL: ref, Reason: fmt.Sprintf("%d layers, more than the %d read", len(mf.Layers), MaxAttachedLayers)}
	}
	out := Attached{Found: true, Digest: m.digest.String()}
	for _, l := range mf.Layers {
		if l.Size > maxBlob {
			return Attached{}, &transport.LimitError{URL: ref, Reason: fmt.Sprintf("layer %s of %d bytes, more than a signature may have (%d)", l.Digest, l.Size, maxBlob)}
		}
		p, _, err := c.blob(ctx, m, l.Digest, l.Size)
		if err != nil {
			return Attached{}, err
		}
		data, err := safefile.ReadFile(p, safefile.Options{Max: maxBlob})
		if err != nil {
			return Attached{}, err
		}
		out.Layers = append(out.Layers, AttachedLayer{MediaType: string(l.MediaType), Digest: l.Digest.String(), Annotations: l.Annotations, Data: data})
	}
	return out, nil
}

// attachedManifest fetches r's manifest: nil when the registry has no such tag or digest.
// Unlike an image's, a missing tag is an answer here (the image is unsigned), so no tag list
// is read to suggest others.
func (c *Client) attachedManifest(ctx context.Context, r imgRef) (*manifest, error) {
	if r.digest != "" || c.opts.Offline {
		m, err := c.getManifest(ctx, r)
		var ud *UnknownDigestError
		if errors.As(err, &ud) {
			return nil, nil
		}
		return m, err
	}
	loc := mirror.Rewrite(c.opts.Mirrors, r.repo)
	ref, err := name.NewTag(loc+":"+r.tag, c.nameOpts(loc)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	var m *manifest
	err = c.attempt(ctx, r.String(), func() error {
		got, err := remote.Get(ref, c.remoteOpts(ctx)...)
		if err != nil {
			return err
		}
		if _, _, err := c.cache.Put(got.Digest, bytes.NewReader(got.Manifest)); err != nil {
			return err
		}
		m = &manifest{ref: r, raw: got.Manifest, mediaType: got.MediaType, digest: got.Digest, locs: []string{loc}}
		return nil
	})
	var te *remotetransport.Error
	if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, c.explain(err, "fetching manifest "+r.String(), loc)
	}
	if err := c.cache.UpdateTags(r.repo, func(t *cache.TagRecord) { t.Digests[r.tag] = m.digest.String() }); err != nil {
		c.log.Warn("cannot record tag in cache", "ref", r.String(), "error", err)
	}
	return m, nil
}

// cachedAttached serves a tag from the cache alone: its recorded digest, the manifest and
// every layer.
func (c *Client) cachedAttached(r imgRef, maxBlob int64) (Attached, bool) {
	rec, err := c.cache.ReadTags(r.repo)
	if err != nil {
		return Attached{}, false
	}
	d, ok := rec.Digests[r.tag]
	if !ok {
		return Attached{}, false
	}
	h, err := v1.NewHash(d)
	if err != nil {
		return Attached{}, false
	}
	raw, ok := c.cache.ReadSmall(h)
	if !ok {
		return Attached{}, false
	}
	mf, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil || len(mf.Layers) > MaxAttachedLayers {
		return Attached{}, false
	}
	out := Attached{Found: true, Cached: true, Digest: d}
	for _, l := range mf.Layers {
		if l.Size > maxBlob {
			return Attached{}, false
		}
		data, ok := c.cache.ReadSmall(l.Digest)
		if !ok {
			return Attached{}, false
		}
		out.Layers = append(out.Layers, AttachedLayer{MediaType: string(l.MediaType), Digest: l.Digest.String(), Annotations: l.Annotations, Data: data})
	}
	c.tally(blobStat{cached: true})
	return out, true
}

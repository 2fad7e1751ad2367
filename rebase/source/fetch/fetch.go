package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	remotetransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// manifest is a fetched manifest or index and where its blobs can be pulled from.
type manifest struct {
	ref       imgRef
	raw       []byte
	mediaType types.MediaType
	digest    v1.Hash
	locs      []string // repositories to pull blobs from, best first
	layout    *ociLayout
}

type blobStat struct {
	fetched int64
	cached  bool
}

func (c *Client) remoteOpts(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.Reuse(c.puller)}
}

// baseRemoteOpts configure the shared puller: our transport, auth and user agent.
func (c *Client) baseRemoteOpts() []remote.Option {
	return []remote.Option{
		remote.WithTransport(c.client.Transport),
		remote.WithAuthFromKeychain(c.keychain),
		// Our transport retries (with Retry-After); ggcr's retry layer is switched off so a
		// failing registry is not hit attempts² times.
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithRetryStatusCodes(),
		remote.WithUserAgent("lvms-rebase"),
		// ggcr bounds the blob downloads of one puller (default 4); ours is shared by the
		// bundle's and the payloads' fetches, which overlap, so its bound is two fan-outs'
		// (each fan-out is bounded by Concurrency): the bundle's small blobs do not queue
		// behind the payloads' large layers.
		remote.WithJobs(max(2*c.opts.Concurrency, 4)),
	}
}

func (c *Client) nameOpts(repo string) []name.Option {
	host, _, _ := strings.Cut(repo, "/")
	if transport.InsecureHost(c.opts.Insecure, host) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// explain turns registry errors into ones a maintainer can act on.
func (c *Client) explain(err error, what, loc string) error {
	err = redact.Err(err) // net/http quotes request URLs (url.Error)
	var te *remotetransport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		host, _, _ := strings.Cut(loc, "/")
		reg, rerr := name.NewRegistry(host, c.nameOpts(loc)...)
		regName := host
		if rerr == nil {
			regName = reg.RegistryStr()
		}
		return fmt.Errorf("%s: registry %s denied access (HTTP %d) to %s; %s: %w",
			what, regName, te.StatusCode, loc, c.keychain.Describe(regName), err)
	}
	if digestMismatch(err) {
		return fmt.Errorf("%s (from %s): the registry's content does not match its digest (not retried): %w", what, loc, err)
	}
	return fmt.Errorf("%s (from %s): %w", what, loc, err)
}

// transient reports whether an operation error deserves another attempt: HTTP status errors
// were already retried by the transport; body-level failures (a truncated or reset body)
// were not. Content that arrived whole but does not match its digest is not retried: the
// registry serves other bytes under that digest, and downloading them again at full size
// would only repeat the answer.
func transient(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || transport.IsLimit(err) || digestMismatch(err) {
		return false
	}
	var te *remotetransport.Error
	if errors.As(err, &te) {
		return false
	}
	var cd *corruptDownloadError
	return transport.Retryable(err) || errors.As(err, &cd)
}

// digestMismatch reports whether err says content did not hash to its digest: ours
// (cache.put) or ggcr's, which reports them as plain errors ("error verifying sha256
// checksum…" for blobs, "manifest digest … does not match requested digest" for manifests).
func digestMismatch(err error) bool {
	var dm *cache.DigestMismatchError
	msg := err.Error()
	return errors.As(err, &dm) || strings.Contains(msg, "verifying sha256 checksum") || strings.Contains(msg, "does not match requested digest")
}

// attempt runs f until it succeeds, fails permanently or attempts run out.
func (c *Client) attempt(ctx context.Context, what string, f func() error) error {
	var err error
	delays := c.opts.Retry.Delays()
	for i := 1; i <= c.opts.Retry.Attempts; i++ {
		var ex *transport.ExhaustedError
		if err = f(); err != nil && ctx.Err() != nil {
			// Stopped by SIGINT or --timeout: say what was being fetched.
			return fmt.Errorf("%s: %w", what, err)
		}
		if err == nil || !transient(ctx, err) || errors.As(err, &ex) {
			// An exhausted request already spent its retry budget in the transport.
			return err
		}
		if i < c.opts.Retry.Attempts {
			d := delays.Step()
			c.log.Warn("retrying", "what", what, "error", err, "in", d)
			if serr := transport.Sleep(ctx, d); serr != nil {
				return fmt.Errorf("%s: %w", what, serr)
			}
		}
	}
	return fmt.Errorf("giving up after %d attempts: %w", c.opts.Retry.Attempts, err)
}

// getManifest fetches the manifest r points at: by digest through the cache and IDMS
// mirrors, by tag from the (rewritten) registry — or from the cache's tag record offline.
func (c *Client) getManifest(ctx context.Context, r imgRef) (*manifest, error) {
	if r.oci {
		return c.ociManifest(r, "")
	}
	if r.digest != "" {
		h, err := v1.NewHash(r.digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		return c.manifestByDigest(ctx, r, h, "")
	}
	if c.opts.Offline {
		rec, err := c.cache.ReadTags(r.repo)
		if err != nil {
			return nil, err
		}
		d, ok := rec.Digests[r.tag]
		if !ok {
			return nil, fmt.Errorf("%s: tag not in the cache %s (offline: run once online with this %s, or pin by digest)", r, c.cache.Dir(), option.CacheDir)
		}
		h, err := v1.NewHash(d)
		if err != nil {
			return nil, err
		}
		return c.manifestByDigest(ctx, r, h, "")
	}
	loc := mirror.Rewrite(c.opts.Mirrors, r.repo)
	ref, err := name.NewTag(loc+":"+r.tag, c.nameOpts(loc)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	var m *manifest
	// A HEAD answers the tag → digest question without a manifest GET when the manifest is
	// cached; a tag never seen before goes straight to GET, saving a round trip cold.
	head := c.tagSeen(r)
	err = c.attempt(ctx, r.String(), func() error {
		if head {
			if m = c.headCached(ctx, ref, r, loc); m != nil {
				return nil
			}
		}
		got, err := remote.Get(ref, c.remoteOpts(ctx)...)
		if err != nil {
			return err
		}
		mt, err := checkManifest(r.String(), "manifest "+got.Digest.String(), got.MediaType, got.Manifest)
		if err != nil {
			return err
		}
		if _, _, err := c.cache.Put(got.Digest, bytes.NewReader(got.Manifest)); err != nil {
			return err
		}
		m = &manifest{ref: r, raw: got.Manifest, mediaType: mt, digest: got.Digest, locs: []string{loc}}
		return nil
	})
	if err != nil {
		var te *remotetransport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return nil, c.unknownTag(ctx, r, err)
		}
		return nil, c.explain(err, "fetching manifest "+r.String(), loc)
	}
	if err := c.cache.UpdateTags(r.repo, func(t *cache.TagRecord) { t.Digests[r.tag] = m.digest.String() }); err != nil {
		c.log.Warn("cannot record tag in cache", "ref", r.String(), "error", err)
	}
	return m, nil
}

// headCached answers a tag with a HEAD when the digest it names is cached (nil otherwise).
func (c *Client) headCached(ctx context.Context, ref name.Reference, r imgRef, loc string) *manifest {
	desc, err := remote.Head(ref, c.remoteOpts(ctx)...)
	if err != nil {
		return nil
	}
	raw, ok := c.cache.ReadSmall(desc.Digest)
	if !ok {
		return nil
	}
	mt, err := checkManifest(r.String(), "manifest "+desc.Digest.String(), desc.MediaType, raw)
	if err != nil {
		return nil // the GET that follows says what is wrong
	}
	return &manifest{ref: r, raw: raw, mediaType: mt, digest: desc.Digest, locs: []string{loc}}
}

// tagSeen reports whether the cache recorded tag r and still holds its manifest.
func (c *Client) tagSeen(r imgRef) bool {
	rec, err := c.cache.ReadTags(r.repo)
	if err != nil {
		return false
	}
	d, ok := rec.Digests[r.tag]
	if !ok {
		return false
	}
	h, err := v1.NewHash(d)
	if err != nil {
		return false
	}
	_, ok = c.cache.ReadSmall(h)
	return ok
}

// manifestByDigest fetches the manifest h of r's repository; declared is the media type the
// index naming it declares ("" for none).
func (c *Client) manifestByDigest(ctx context.Context, r imgRef, h v1.Hash, declared types.MediaType) (*manifest, error) {
	locs := mirror.Locations(r.repo, true, c.opts.IDMS, c.opts.Mirrors)
	what := "manifest " + h.String()
	if raw, ok := c.cache.ReadSmall(h); ok {
		mt, err := checkManifest(r.String(), what, declared, raw)
		if err != nil {
			return nil, err
		}
		return &manifest{ref: r, raw: raw, mediaType: mt, digest: h, locs: locs}, nil
	}
	if c.opts.Offline {
		return nil, fmt.Errorf("%s@%s: manifest not in the cache %s (offline)", r.repo, h, c.cache.Dir())
	}
	var errs []error
	for i, loc := range locs {
		ref, err := name.NewDigest(loc+"@"+h.String(), c.nameOpts(loc)...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		var got *remote.Descriptor
		var mt types.MediaType
		err = c.attempt(ctx, ref.String(), func() error {
			d, err := remote.Get(ref, c.remoteOpts(ctx)...)
			if err != nil {
				return err
			}
			// The registry's Content-Type, then the index's descriptor, against the content.
			if mt, err = checkManifest(r.String(), what, d.MediaType, d.Manifest); err == nil {
				mt, err = checkManifest(r.String(), what, declared, d.Manifest)
			}
			if err != nil {
				return err
			}
			if _, _, err := c.cache.Put(h, bytes.NewReader(d.Manifest)); err != nil {
				return err
			}
			got = d
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("fetching manifest %s@%s: %w", r.repo, h, ctx.Err())
			}
			errs = append(errs, c.explain(err, "fetching manifest "+r.repo+"@"+h.String(), loc))
			continue
		}
		// Blobs come from where the manifest came from first.
		order := append([]string{loc}, append(append([]string(nil), locs[:i]...), locs[i+1:]...)...)
		return &manifest{ref: r, raw: got.Manifest, mediaType: mt, digest: h, locs: order}, nil
	}
	if allNotFound(errs) {
		return nil, &UnknownDigestError{Repo: r.repo, Digest: h.String(), Err: errors.Join(errs...)}
	}
	return nil, errors.Join(errs...)
}

// UnknownDigestError is a manifest pinned by digest that every location answers 404 for:
// the registry does not have it. For a run pinned by a lock file (--check) the lock's input
// is not what the registry gives.
type UnknownDigestError struct {
	Repo, Digest string
	Err          error
}

func (e *UnknownDigestError) Error() string {
	return fmt.Sprintf("%s@%s: the registry does not have this manifest (HTTP 404): %v", e.Repo, e.Digest, e.Err)
}

func (e *UnknownDigestError) Unwrap() error { return e.Err }

// allNotFound reports whether every error is an HTTP 404 (and there is at least one).
func allNotFound(errs []error) bool {
	for _, err := range errs {
		var te *remotetransport.Error
		if !errors.As(err, &te) || te.StatusCode != http.StatusNotFound {
			return false
		}
	}
	return len(errs) > 0
}

// ociManifest reads the manifest r names from its OCI layout; declared is the media type
// the descriptor naming it declares ("" for none: r pins a digest).
func (c *Client) ociManifest(r imgRef, declared types.MediaType) (*manifest, error) {
	l, err := c.layout(r.repo)
	if err != nil {
		return nil, err
	}
	var h v1.Hash
	if r.digest != "" {
		if h, err = v1.NewHash(r.digest); err != nil {
			return nil, err
		}
	} else {
		d, err := l.find(r.tag)
		if err != nil {
			return nil, err
		}
		h, declared = d.Digest, d.MediaType
	}
	raw, err := safefile.ReadFile(l.blobPath(h), safefile.Options{Max: transport.DefaultMaxManifestSize})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	if got, _, _ := v1.SHA256(bytes.NewReader(raw)); got != h {
		return nil, fmt.Errorf("%s: OCI layout blob %s is corrupt (hashes to %s)", r, h, got)
	}
	mt, err := checkManifest(r.String(), "manifest "+h.String(), declared, raw)
	if err != nil {
		return nil, err
	}
	return &manifest{ref: r, raw: raw, mediaType: mt, digest: h, layout: l}, nil
}

// child returns the manifest of a list entry.
func (c *Client) child(ctx context.Context, parent *manifest, d v1.Descriptor) (*manifest, error) {
	r := parent.ref.withDigest(d.Digest.String())
	if parent.layout != nil {
		return c.ociManifest(r, d.MediaType)
	}
	return c.manifestByDigest(ctx, r, d.Digest, d.MediaType)
}

// blob returns the verified local path of a blob: the cache, the OCI layout, or a download
// into the cache (retried on truncation and digest mismatch, trying each location).
func (c *Client) blob(ctx context.Context, m *manifest, h v1.Hash, size int64) (string, blobStat, error) {
	return c.streamBlob(ctx, m, h, size, nil)
}

// streamBlob is blob whose first download attempt also feeds s (nil: none; stream.go).
func (c *Client) streamBlob(ctx context.Context, m *manifest, h v1.Hash, size int64, s *stream) (_ string, st blobStat, err error) {
	// Every blob counts in Totals, whichever phase asked for it (resolve reads CSVs and
	// release metadata too).
	defer func() {
		if err == nil {
			c.tally(st)
		}
	}()
	if m.layout != nil {
		p := m.layout.blobPath(h)
		// Hashed as it is read: a regular file of the layout, whatever its size.
		f, _, err := safefile.Open(p, safefile.Options{Max: safefile.NoSizeCap})
		if err != nil {
			return "", st, fmt.Errorf("%s: blob %s: %w", m.ref, h, err)
		}
		got, _, err := v1.SHA256(f)
		f.Close()
		if err != nil || got != h {
			return "", st, fmt.Errorf("%s: OCI layout blob %s is corrupt", m.ref, h)
		}
		st.cached = true
		return p, st, nil
	}
	p, err := c.cache.Get(h)
	if err != nil {
		return "", st, err
	}
	if p != "" {
		st.cached = true
		return p, st, nil
	}
	if c.opts.Offline {
		return "", st, fmt.Errorf("%s: blob %s not in the cache %s (offline)", m.ref, h, c.cache.Dir())
	}
	if size < 0 || size > c.opts.MaxImageSize {
		// A manifest may declare any size; nothing larger than an image may be is downloaded.
		return "", st, &transport.LimitError{URL: m.ref.String(), Reason: fmt.Sprintf("blob %s declares %d bytes, over the %d of %s", h, size, c.opts.MaxImageSize, option.MaxImageSize)}
	}
	if size == 0 {
		size = c.opts.MaxImageSize // a size left out: bounded all the same
	}
	var errs []error
	for _, loc := range m.locs {
		ref, err := name.NewDigest(loc+"@"+h.String(), c.nameOpts(loc)...)
		if err != nil {
			return "", st, err
		}
		err = c.attempt(ctx, ref.String(), func() error {
			l, err := remote.Layer(ref, c.remoteOpts(ctx)...)
			if err != nil {
				return err
			}
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			defer rc.Close()
			// A body longer than the manifest says is wrong whatever follows: stop there.
			body := transport.LimitBody(rc, size, &transport.LimitError{URL: ref.String(), Reason: fmt.Sprintf("blob larger than the %d bytes its manifest declares", size)})
			path, n, err := c.cache.Put(h, c.progressReader(s.feed(body), m.ref.String(), h, size))
			s.end(err)
			st.fetched += n
			if err != nil {
				return err
			}
			p = path
			return nil
		})
		if err == nil {
			return p, st, nil
		}
		if ctx.Err() != nil {
			return "", st, fmt.Errorf("fetching blob %s of %s: %w", h, m.ref, ctx.Err())
		}
		errs = append(errs, c.explain(err, fmt.Sprintf("fetching blob %s of %s", h, m.ref), loc))
	}
	return "", st, errors.Join(errs...)
}

// fileLayer adapts a verified blob file to ggcr so partial handles gzip/zstd/plain.
type fileLayer struct {
	path string
	desc v1.Descriptor
}

func (f *fileLayer) Digest() (v1.Hash, error)            { return f.desc.Digest, nil }
func (f *fileLayer) Size() (int64, error)                { return f.desc.Size, nil }
func (f *fileLayer) MediaType() (types.MediaType, error) { return f.desc.MediaType, nil }
func (f *fileLayer) Compressed() (io.ReadCloser, error) {
	// The blob verified a moment ago; opened again under the same policy, never through a
	// link or into a FIFO swapped in since.
	rc, _, err := safefile.Open(f.path, safefile.Options{Max: safefile.NoSizeCap})
	return rc, err
}

// check refuses a layer whose first bytes contradict its declared media type.
func (f *fileLayer) check(ref string) error {
	rc, err := f.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	return checkLayer(ref, f.desc, head[:n])
}

func (c *Client) layerOpener(ctx context.Context, m *manifest, d v1.Descriptor, stats *Stats) extract.Layer {
	return extract.Layer{
		Name: "layer " + d.Digest.String(),
		Open: func() (io.ReadCloser, error) {
			p, st, err := c.blob(ctx, m, d.Digest, d.Size)
			stats.add(d.Digest.String(), st)
			stats.LayersRead++
			if err != nil {
				return nil, err
			}
			fl := &fileLayer{path: p, desc: d}
			if err := fl.check(m.ref.String()); err != nil {
				return nil, err
			}
			l, err := partial.CompressedToLayer(fl)
			if err != nil {
				return nil, err
			}
			return l.Uncompressed()
		},
	}
}

// platformChild picks the linux/<goarch> entry of an index with ggcr's platform matching.
func platformChild(idx *v1.IndexManifest, goarch string) (v1.Descriptor, bool) {
	want := v1.Platform{OS: "linux", Architecture: goarch}
	for _, d := range idx.Manifests {
		if d.Platform != nil && d.Platform.Satisfies(want) {
			return d, true
		}
	}
	return v1.Descriptor{}, false
}

// image resolves m to a single-arch image manifest for goarch ("" = amd64 or the only one)
// and checks the config's platform. It returns the image manifest, the parsed manifest and
// config, and the list digest when m was a list. pick, when set, names the layers the caller
// is going to read; they are downloaded in parallel with the config.
func (c *Client) image(ctx context.Context, m *manifest, goarch string, stats *Stats, pick layerPicker, s *stream, onImage func(digest, list string)) (*manifest, *v1.Manifest, *v1.ConfigFile, string, error) {
	listDigest := ""
	if m.mediaType.IsIndex() {
		idx, err := v1.ParseIndexManifest(bytes.NewReader(m.raw))
		if err != nil {
			return nil, nil, nil, "", fmt.Errorf("%s: parsing manifest list: %w", m.ref, err)
		}
		want := goarch
		var d v1.Descriptor
		var ok bool
		if want == "" {
			if len(idx.Manifests) == 1 {
				d, ok = idx.Manifests[0], true
			} else {
				want = "amd64"
			}
		}
		if !ok {
			if d, ok = platformChild(idx, want); !ok {
				return nil, nil, nil, "", fmt.Errorf("image %s (list %s) has no linux/%s entry", m.ref, m.digest, want)
			}
		}
		listDigest = m.digest.String()
		if m, err = c.child(ctx, m, d); err != nil {
			return nil, nil, nil, "", err
		}
	}
	mf, err := v1.ParseManifest(bytes.NewReader(m.raw))
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: parsing manifest %s: %w", m.ref, m.digest, err)
	}
	if mf.Config.Size > safefile.DefaultMaxSize {
		// The config is parsed in memory; real ones are a few KB.
		return nil, nil, nil, "", &transport.LimitError{URL: m.ref.String(), Reason: fmt.Sprintf("config %s declares %d bytes, over the %d-byte cap of an image config", mf.Config.Digest, mf.Config.Size, safefile.DefaultMaxSize)}
	}
	if onImage != nil {
		onImage(m.digest.String(), listDigest)
	}
	if pick != nil {
		// The config and the layers the caller will read download together: one round
		// trip instead of one per blob. Extraction then reads them from the cache.
		if top := topLayer(mf); s != nil && len(top) == 1 {
			// The layer a stream feeds is the one the payload picker reads.
			s.digest, s.mediaType, s.ref = top[0].Digest, top[0].MediaType, m.ref.String()
		}
		if err := c.prefetch(ctx, m, append([]v1.Descriptor{mf.Config}, pick(mf)...), stats, s); err != nil {
			return nil, nil, nil, "", err
		}
	}
	p, st, err := c.blob(ctx, m, mf.Config.Digest, mf.Config.Size)
	if stats != nil {
		stats.add(mf.Config.Digest.String(), st)
	}
	if err != nil {
		return nil, nil, nil, "", err
	}
	f, _, err := safefile.Open(p, safefile.Options{}) // a config is a small JSON document
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: config %s: %w", m.ref, mf.Config.Digest, err)
	}
	cfg, err := v1.ParseConfigFile(f)
	f.Close()
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: parsing config %s: %w", m.ref, mf.Config.Digest, err)
	}
	if goarch != "" && (cfg.OS != "linux" || cfg.Architecture != goarch) {
		return nil, nil, nil, "", fmt.Errorf("image %s (%s) is %s/%s, want linux/%s", m.ref, m.digest, cfg.OS, cfg.Architecture, goarch)
	}
	return m, mf, cfg, listDigest, nil
}

// ImageDigests resolves image (usually a relatedImage, by digest) to its list digest and
// the child digest of each arch (MicroShift names). A single-arch image must be of the
// requested arch; a missing arch is an error naming the image and arch.
func (c *Client) ImageDigests(ctx context.Context, image string, arches []string) (*ImageDigests, error) {
	r, err := parseRef(image)
	if err != nil {
		return nil, err
	}
	m, err := c.getManifest(ctx, r)
	if err != nil {
		return nil, err
	}
	out := &ImageDigests{Image: image, Arches: []ArchDigest{}}
	if m.mediaType.IsIndex() {
		idx, err := v1.ParseIndexManifest(bytes.NewReader(m.raw))
		if err != nil {
			return nil, fmt.Errorf("%s: parsing manifest list: %w", image, err)
		}
		out.ListDigest = m.digest.String()
		var missing []string
		for _, a := range arches {
			ga, err := arch.GoArch(a)
			if err != nil {
				return nil, err
			}
			d, ok := platformChild(idx, ga)
			if !ok {
				missing = append(missing, fmt.Sprintf("%s (linux/%s)", a, ga))
				continue
			}
			out.Arches = append(out.Arches, ArchDigest{Arch: a, Digest: d.Digest.String()})
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("image %s (list %s) has no entry for arch %s", image, m.digest, strings.Join(missing, ", "))
		}
		return out, nil
	}
	_, _, cfg, _, err := c.image(ctx, m, "", nil, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, a := range arches {
		ga, err := arch.GoArch(a)
		if err != nil {
			return nil, err
		}
		if cfg.OS != "linux" || cfg.Architecture != ga {
			return nil, fmt.Errorf("image %s is single-arch %s/%s: no entry for arch %s (linux/%s)", image, cfg.OS, cfg.Architecture, a, ga)
		}
		out.Arches = append(out.Arches, ArchDigest{Arch: a, Digest: m.digest.String()})
	}
	return out, nil
}

// Request names an image and what to extract from it.
type Request struct {
	// Kind names the image in messages ("bundle", "payload").
	Kind string
	// Ref is the canonical reference; Digest, when set, pins it (the tag is then display).
	Ref, Digest string
	// Arch is the MicroShift arch of the image to read from a manifest list ("": linux/amd64
	// or the list's only entry); a single-arch image must be of that arch.
	Arch string
	// Prefixes are the directories extracted.
	Prefixes []string
	// Want, when set, makes the extraction read layers from the top down and stop as soon as
	// every Want path is found (normally after the top layer only); a path in no layer is an
	// error. Without it every layer is applied in order, with whiteouts.
	Want []string
	// OnFile, when set, hears each extracted file's path (relative to dir) once it is written.
	// With Want that is while the top layer is still downloading: such a file is not verified
	// against the layer's digest until Extract has returned without error, so OnFile may only
	// start work that the verified result confirms. Called from one goroutine at a time; a
	// path may be heard twice (a stream cut short is extracted again from the cache).
	OnFile func(path string)
	// OnImage, when set, hears the digest of the single-arch manifest the extraction reads (and
	// the list's it was chosen from, "" for none) as soon as it is known, before its config and
	// layers are fetched: a caller can start work on the digest (its signatures) meanwhile.
	OnImage func(digest, listDigest string)
}

// Image is the single-arch image an extraction read.
type Image struct {
	// Digest is its manifest digest; ListDigest the manifest list's, when Ref named one.
	Digest, ListDigest string
}

// Extract writes req's directories of the image into dir. The manifest comes first, then
// the config (to check the arch) together with the layers it is going to read; with Want,
// the top layer is extracted while it downloads (stream.go).
func (c *Client) Extract(ctx context.Context, req Request, dir string) (*Stats, *Image, error) {
	r, err := parseRef(req.Ref)
	if err != nil {
		return nil, nil, err
	}
	goarch := ""
	if req.Arch != "" {
		if goarch, err = arch.GoArch(req.Arch); err != nil {
			return nil, nil, err
		}
	}
	if req.Digest != "" {
		r = r.withDigest(req.Digest)
	}
	stats := &Stats{Image: req.Ref}
	m, err := c.getManifest(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	pick := allLayers
	var s *streamed
	if len(req.Want) > 0 {
		pick = topLayer
		s = c.startStream(req, m, dir)
	}
	img, mf, _, listDigest, err := c.image(ctx, m, goarch, stats, pick, s.feeding(), req.OnImage)
	if err := s.wait(err); err != nil {
		return nil, nil, err
	}
	stats.LayersTotal = len(mf.Layers)
	if s.extracted(req) {
		stats.LayersRead, stats.Files = 1, s.res.Files
		return stats, &Image{Digest: img.digest.String(), ListDigest: listDigest}, nil
	}
	if err := s.discard(req, dir); err != nil {
		return nil, nil, err
	}
	layers := make([]extract.Layer, len(mf.Layers))
	for i, d := range mf.Layers {
		layers[i] = c.layerOpener(ctx, img, d, stats)
	}
	if err := c.extract(req, img.digest.String(), layers, dir, stats); err != nil {
		return nil, nil, err
	}
	return stats, &Image{Digest: img.digest.String(), ListDigest: listDigest}, nil
}

// extractOptions are the extraction's bounds and filters for req.
func (c *Client) extractOptions(req Request) extract.Options {
	return extract.Options{Prefixes: req.Prefixes, MaxFileSize: c.opts.MaxFileSize, MaxImageSize: c.opts.MaxImageSize,
		Name: req.Ref, OnFile: req.OnFile}
}

// wantDone reports whether files hold every path req wants.
func wantDone(req Request, files []string) bool {
	for _, w := range req.Want {
		if !slices.Contains(files, w) {
			return false
		}
	}
	return true
}

// extract applies layers into dir as req says and records the files in stats.
func (c *Client) extract(req Request, digest string, layers []extract.Layer, dir string, stats *Stats) error {
	opts := c.extractOptions(req)
	if len(req.Want) == 0 {
		res, err := extract.Layers(layers, dir, opts)
		if err != nil {
			return fmt.Errorf("extracting %s %s: %w", req.Kind, req.Ref, err)
		}
		stats.Files = res.Files
		return nil
	}
	done := func(files []string) bool { return wantDone(req, files) }
	res, _, err := extract.TopDown(layers, dir, opts, done)
	if err != nil {
		return fmt.Errorf("extracting %s %s: %w", req.Kind, req.Ref, err)
	}
	stats.Files = res.Files
	if !done(res.Files) {
		return fmt.Errorf("%s %s (%s) has no %s in any layer", req.Kind, req.Ref, digest, strings.Join(req.Want, " and "))
	}
	return nil
}

// Digest returns the digest of the manifest (or manifest list) ref names.
func (c *Client) Digest(ctx context.Context, ref string) (string, error) {
	r, err := parseRef(ref)
	if err != nil {
		return "", err
	}
	m, err := c.getManifest(ctx, r)
	if err != nil {
		return "", err
	}
	return m.digest.String(), nil
}

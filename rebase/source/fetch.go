package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
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

func (s *Source) remoteOpts(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.Reuse(s.puller)}
}

// baseRemoteOpts configure the shared puller: our transport, auth and user agent.
func (s *Source) baseRemoteOpts() []remote.Option {
	return []remote.Option{
		remote.WithTransport(s.client.Transport),
		remote.WithAuthFromKeychain(s.keychain),
		// Our transport retries (with Retry-After); ggcr's retry layer is switched off so a
		// failing registry is not hit attempts² times.
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithRetryStatusCodes(),
		remote.WithUserAgent("lvms-rebase"),
	}
}

func (s *Source) nameOpts(repo string) []name.Option {
	host, _, _ := strings.Cut(repo, "/")
	if isInsecureHost(s.opts.Insecure, host) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// explain turns registry errors into ones a maintainer can act on.
func (s *Source) explain(err error, what, loc string) error {
	err = redact.Err(err) // net/http quotes request URLs (url.Error)
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		host, _, _ := strings.Cut(loc, "/")
		reg, rerr := name.NewRegistry(host, s.nameOpts(loc)...)
		regName := host
		if rerr == nil {
			regName = reg.RegistryStr()
		}
		return fmt.Errorf("%s: registry %s denied access (HTTP %d) to %s; %s: %w",
			what, regName, te.StatusCode, loc, s.keychain.describe(regName), err)
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
	if err == nil || ctx.Err() != nil || isLimit(err) || digestMismatch(err) {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return false
	}
	var cd *corruptDownloadError
	return retryableErr(err) || errors.As(err, &cd)
}

// digestMismatch reports whether err says content did not hash to its digest: ours
// (cache.put) or ggcr's, which reports them as plain errors ("error verifying sha256
// checksum…" for blobs, "manifest digest … does not match requested digest" for manifests).
func digestMismatch(err error) bool {
	var dm *digestMismatchError
	msg := err.Error()
	return errors.As(err, &dm) || strings.Contains(msg, "verifying sha256 checksum") || strings.Contains(msg, "does not match requested digest")
}

// attempt runs f until it succeeds, fails permanently or attempts run out.
func (s *Source) attempt(ctx context.Context, what string, f func() error) error {
	var err error
	delays := s.opts.Retry.backoff()
	for i := 1; i <= s.opts.Retry.Attempts; i++ {
		var ex *exhaustedError
		if err = f(); err != nil && ctx.Err() != nil {
			// Stopped by SIGINT or --timeout: say what was being fetched.
			return fmt.Errorf("%s: %w", what, err)
		}
		if err == nil || !transient(ctx, err) || errors.As(err, &ex) {
			// An exhausted request already spent its retry budget in the transport.
			return err
		}
		if i < s.opts.Retry.Attempts {
			d := delays.Step()
			s.log.Warn("retrying", "what", what, "error", err, "in", d)
			if serr := sleepCtx(ctx, d); serr != nil {
				return fmt.Errorf("%s: %w", what, serr)
			}
		}
	}
	return fmt.Errorf("giving up after %d attempts: %w", s.opts.Retry.Attempts, err)
}

// getManifest fetches the manifest r points at: by digest through the cache and IDMS
// mirrors, by tag from the (rewritten) registry — or from the cache's tag record offline.
func (s *Source) getManifest(ctx context.Context, r imgRef) (*manifest, error) {
	if r.oci {
		return s.ociManifest(r)
	}
	if r.digest != "" {
		h, err := v1.NewHash(r.digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		return s.manifestByDigest(ctx, r, h)
	}
	if s.opts.Offline {
		rec, err := s.cache.readTags(r.repo)
		if err != nil {
			return nil, err
		}
		d, ok := rec.Digests[r.tag]
		if !ok {
			return nil, fmt.Errorf("%s: tag not in the cache %s (offline: run once online with this %s, or pin by digest)", r, s.cache.dir, option.CacheDir)
		}
		h, err := v1.NewHash(d)
		if err != nil {
			return nil, err
		}
		return s.manifestByDigest(ctx, r, h)
	}
	loc := rewriteRepo(s.opts.Mirrors, r.repo)
	ref, err := name.NewTag(loc+":"+r.tag, s.nameOpts(loc)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	var m *manifest
	// A HEAD answers the tag → digest question without a manifest GET when the manifest is
	// cached; a tag never seen before goes straight to GET, saving a round trip cold.
	head := s.tagSeen(r)
	err = s.attempt(ctx, r.String(), func() error {
		if head {
			if m = s.headCached(ctx, ref, r, loc); m != nil {
				return nil
			}
		}
		got, err := remote.Get(ref, s.remoteOpts(ctx)...)
		if err != nil {
			return err
		}
		if _, _, err := s.cache.put(got.Digest, bytes.NewReader(got.Manifest)); err != nil {
			return err
		}
		m = &manifest{ref: r, raw: got.Manifest, mediaType: got.MediaType, digest: got.Digest, locs: []string{loc}}
		return nil
	})
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return nil, s.unknownTag(ctx, r, err)
		}
		return nil, s.explain(err, "fetching manifest "+r.String(), loc)
	}
	if err := s.cache.updateTags(r.repo, func(t *tagRecord) { t.Digests[r.tag] = m.digest.String() }); err != nil {
		s.log.Warn("cannot record tag in cache", "ref", r.String(), "error", err)
	}
	return m, nil
}

// headCached answers a tag with a HEAD when the digest it names is cached (nil otherwise).
func (s *Source) headCached(ctx context.Context, ref name.Reference, r imgRef, loc string) *manifest {
	desc, err := remote.Head(ref, s.remoteOpts(ctx)...)
	if err != nil {
		return nil
	}
	raw, ok := s.cache.readSmall(desc.Digest)
	if !ok {
		return nil
	}
	return &manifest{ref: r, raw: raw, mediaType: mediaTypeOf(raw), digest: desc.Digest, locs: []string{loc}}
}

// tagSeen reports whether the cache recorded tag r and still holds its manifest.
func (s *Source) tagSeen(r imgRef) bool {
	rec, err := s.cache.readTags(r.repo)
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
	_, ok = s.cache.readSmall(h)
	return ok
}

func (s *Source) manifestByDigest(ctx context.Context, r imgRef, h v1.Hash) (*manifest, error) {
	locs := s.locations(r.repo, true)
	if raw, ok := s.cache.readSmall(h); ok {
		return &manifest{ref: r, raw: raw, mediaType: mediaTypeOf(raw), digest: h, locs: locs}, nil
	}
	if s.opts.Offline {
		return nil, fmt.Errorf("%s@%s: manifest not in the cache %s (offline)", r.repo, h, s.cache.dir)
	}
	var errs []error
	for i, loc := range locs {
		ref, err := name.NewDigest(loc+"@"+h.String(), s.nameOpts(loc)...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		var got *remote.Descriptor
		err = s.attempt(ctx, ref.String(), func() error {
			d, err := remote.Get(ref, s.remoteOpts(ctx)...)
			if err != nil {
				return err
			}
			if _, _, err := s.cache.put(h, bytes.NewReader(d.Manifest)); err != nil {
				return err
			}
			got = d
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("fetching manifest %s@%s: %w", r.repo, h, ctx.Err())
			}
			errs = append(errs, s.explain(err, "fetching manifest "+r.repo+"@"+h.String(), loc))
			continue
		}
		// Blobs come from where the manifest came from first.
		order := append([]string{loc}, append(append([]string(nil), locs[:i]...), locs[i+1:]...)...)
		return &manifest{ref: r, raw: got.Manifest, mediaType: got.MediaType, digest: h, locs: order}, nil
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
		var te *transport.Error
		if !errors.As(err, &te) || te.StatusCode != http.StatusNotFound {
			return false
		}
	}
	return len(errs) > 0
}

func (s *Source) ociManifest(r imgRef) (*manifest, error) {
	l, err := s.layout(r.repo)
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
		h = d.Digest
	}
	raw, err := os.ReadFile(l.blobPath(h))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	if got, _, _ := v1.SHA256(bytes.NewReader(raw)); got != h {
		return nil, fmt.Errorf("%s: OCI layout blob %s is corrupt (hashes to %s)", r, h, got)
	}
	return &manifest{ref: r, raw: raw, mediaType: mediaTypeOf(raw), digest: h, layout: l}, nil
}

// child returns the manifest of a list entry.
func (s *Source) child(ctx context.Context, parent *manifest, d v1.Descriptor) (*manifest, error) {
	r := parent.ref.withDigest(d.Digest.String())
	if parent.layout != nil {
		return s.ociManifest(r)
	}
	return s.manifestByDigest(ctx, r, d.Digest)
}

// blob returns the verified local path of a blob: the cache, the OCI layout, or a download
// into the cache (retried on truncation and digest mismatch, trying each location).
func (s *Source) blob(ctx context.Context, m *manifest, h v1.Hash, size int64) (_ string, st blobStat, err error) {
	// Every blob counts in Totals, whichever phase asked for it (resolve reads CSVs and
	// release metadata too).
	defer func() {
		if err == nil {
			s.tally(st)
		}
	}()
	if m.layout != nil {
		p := m.layout.blobPath(h)
		f, err := os.Open(p)
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
	p, err := s.cache.get(h)
	if err != nil {
		return "", st, err
	}
	if p != "" {
		st.cached = true
		return p, st, nil
	}
	if s.opts.Offline {
		return "", st, fmt.Errorf("%s: blob %s not in the cache %s (offline)", m.ref, h, s.cache.dir)
	}
	var errs []error
	for _, loc := range m.locs {
		ref, err := name.NewDigest(loc+"@"+h.String(), s.nameOpts(loc)...)
		if err != nil {
			return "", st, err
		}
		err = s.attempt(ctx, ref.String(), func() error {
			l, err := remote.Layer(ref, s.remoteOpts(ctx)...)
			if err != nil {
				return err
			}
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			defer rc.Close()
			var body io.Reader = rc
			if size > 0 {
				// A body longer than the manifest says is wrong whatever follows: stop there.
				body = &limitBody{ReadCloser: rc, left: size, err: &LimitError{URL: ref.String(), Reason: fmt.Sprintf("blob larger than the %d bytes its manifest declares", size)}}
			}
			path, n, err := s.cache.put(h, s.progressReader(body, m.ref.String(), h, size))
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
		errs = append(errs, s.explain(err, fmt.Sprintf("fetching blob %s of %s", h, m.ref), loc))
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
func (f *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(f.path) }

func (s *Source) layerOpener(ctx context.Context, m *manifest, d v1.Descriptor, stats *FetchStats) extract.Layer {
	return extract.Layer{
		Name: "layer " + d.Digest.String(),
		Open: func() (io.ReadCloser, error) {
			p, st, err := s.blob(ctx, m, d.Digest, d.Size)
			stats.add(d.Digest.String(), st)
			stats.LayersRead++
			if err != nil {
				return nil, err
			}
			l, err := partial.CompressedToLayer(&fileLayer{path: p, desc: d})
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
func (s *Source) image(ctx context.Context, m *manifest, goarch string, stats *FetchStats, pick layerPicker) (*manifest, *v1.Manifest, *v1.ConfigFile, string, error) {
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
		if m, err = s.child(ctx, m, d); err != nil {
			return nil, nil, nil, "", err
		}
	}
	mf, err := v1.ParseManifest(bytes.NewReader(m.raw))
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: parsing manifest %s: %w", m.ref, m.digest, err)
	}
	if pick != nil {
		// The config and the layers the caller will read download together: one round
		// trip instead of one per blob. Extraction then reads them from the cache.
		if err := s.prefetch(ctx, m, append([]v1.Descriptor{mf.Config}, pick(mf)...), stats); err != nil {
			return nil, nil, nil, "", err
		}
	}
	p, st, err := s.blob(ctx, m, mf.Config.Digest, mf.Config.Size)
	if stats != nil {
		stats.add(mf.Config.Digest.String(), st)
	}
	if err != nil {
		return nil, nil, nil, "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, nil, "", err
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
func (s *Source) ImageDigests(ctx context.Context, image string, arches []string) (*ImageDigests, error) {
	r, err := parseRef(image)
	if err != nil {
		return nil, err
	}
	m, err := s.getManifest(ctx, r)
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
			ga, err := GoArch(a)
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
	_, _, cfg, _, err := s.image(ctx, m, "", nil, nil)
	if err != nil {
		return nil, err
	}
	for _, a := range arches {
		ga, err := GoArch(a)
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

// bundlePrefixes are the bundle image directories lvms-rebase reads.
var bundlePrefixes = []string{"manifests/", "metadata/"}

// FetchBundle writes the bundle's manifests/ and metadata/ into dir, applying every layer
// in order with whiteouts. A manifest list is narrowed to linux/amd64 (or its only entry).
func (s *Source) FetchBundle(ctx context.Context, b BundleRef, dir string) (*FetchStats, error) {
	r, err := parseRef(b.Ref)
	if err != nil {
		return nil, err
	}
	if b.Digest != "" {
		r = r.withDigest(b.Digest)
	}
	stats := &FetchStats{Image: b.Ref}
	m, err := s.getManifest(ctx, r)
	if err != nil {
		return nil, err
	}
	img, mf, _, _, err := s.image(ctx, m, "", stats, allLayers)
	if err != nil {
		return nil, err
	}
	stats.LayersTotal = len(mf.Layers)
	layers := make([]extract.Layer, len(mf.Layers))
	for i, d := range mf.Layers {
		layers[i] = s.layerOpener(ctx, img, d, stats)
	}
	res, err := extract.Layers(layers, dir, s.extractOpts(b.Ref, bundlePrefixes))
	if err != nil {
		return nil, fmt.Errorf("extracting bundle %s: %w", b.Ref, err)
	}
	stats.Files = res.Files
	return stats, nil
}

func (s *Source) extractOpts(name string, prefixes []string) extract.Options {
	return extract.Options{Prefixes: prefixes, MaxFileSize: s.opts.MaxFileSize, MaxImageSize: s.opts.MaxImageSize, Name: name}
}

// Payload file names FetchPayload stops at.
const (
	ImageReferencesFile = "release-manifests/image-references"
	ReleaseMetadataFile = "release-manifests/release-metadata"
)

// FetchPayload writes the payload's release-manifests/ into dir. It reads the manifest, the
// config (to check the arch) and then layers from the top down, stopping as soon as
// image-references and release-metadata are found — normally after the top layer only.
func (s *Source) FetchPayload(ctx context.Context, p PayloadRef, dir string) (*FetchStats, error) {
	st, _, err := s.fetchPayload(ctx, p, dir)
	return st, err
}

// payloadImage is the single-arch payload image a fetch read, for resolution.
type payloadImage struct {
	digest     string
	listDigest string
}

func (s *Source) fetchPayload(ctx context.Context, p PayloadRef, dir string) (*FetchStats, *payloadImage, error) {
	r, err := parseRef(p.Ref)
	if err != nil {
		return nil, nil, err
	}
	goarch := ""
	if p.Arch != "" {
		if goarch, err = GoArch(p.Arch); err != nil {
			return nil, nil, err
		}
	}
	stats := &FetchStats{Image: p.Ref}
	var m *manifest
	if p.Digest != "" {
		m, err = s.getManifest(ctx, r.withDigest(p.Digest))
	} else {
		m, err = s.getManifest(ctx, r)
	}
	if err != nil {
		return nil, nil, err
	}
	img, mf, _, listDigest, err := s.image(ctx, m, goarch, stats, topLayer)
	if err != nil {
		return nil, nil, err
	}
	pi := &payloadImage{digest: img.digest.String(), listDigest: listDigest}
	stats.LayersTotal = len(mf.Layers)
	layers := make([]extract.Layer, len(mf.Layers))
	for i, d := range mf.Layers {
		layers[i] = s.layerOpener(ctx, img, d, stats)
	}
	done := func(files []string) bool {
		var refs, meta bool
		for _, f := range files {
			refs = refs || f == ImageReferencesFile
			meta = meta || f == ReleaseMetadataFile
		}
		return refs && meta
	}
	res, _, err := extract.TopDown(layers, dir, s.extractOpts(p.Ref, []string{"release-manifests/"}), done)
	if err != nil {
		return nil, nil, fmt.Errorf("extracting payload %s: %w", p.Ref, err)
	}
	stats.Files = res.Files
	if !done(res.Files) {
		return stats, nil, fmt.Errorf("payload %s (%s) has no %s and %s in any layer", p.Ref, img.digest, ImageReferencesFile, ReleaseMetadataFile)
	}
	return stats, pi, nil
}

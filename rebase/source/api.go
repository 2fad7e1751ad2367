package source

import (
	"context"
	"io"

	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/fetch"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/tags"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// The names callers have always used, kept as aliases of the sub-packages' types.
type (
	// Mirror is one --mirror SRC=DST prefix rewrite.
	Mirror = mirror.Mirror
	// RetryOptions bound the retries of requests and blob downloads.
	RetryOptions = transport.RetryOptions
	// LimitError is a registry answer over one of the bounds.
	LimitError = transport.LimitError
	// FetchStats counts what one fetch cost.
	FetchStats = fetch.Stats
	// ImageDigests are the digests of one (usually multi-arch) image.
	ImageDigests = fetch.ImageDigests
	// ArchDigest is one arch's image digest.
	ArchDigest = fetch.ArchDigest
	// Progress describes a blob download under way.
	Progress = fetch.Progress
	// UnknownDigestError is a manifest pinned by digest that the registry does not have.
	UnknownDigestError = fetch.UnknownDigestError
)

// Bounds and progress defaults, as the sub-packages define them.
const (
	DefaultMaxTagPages     = transport.DefaultMaxTagPages
	DefaultMaxTagListBytes = transport.DefaultMaxTagListBytes
	DefaultMaxManifestSize = transport.DefaultMaxManifestSize
	ProgressMinBytes       = fetch.ProgressMinBytes
	ProgressInterval       = fetch.ProgressInterval
)

// ParseMirror parses a --mirror value SRC=DST.
func ParseMirror(s string) (Mirror, error) { return mirror.Parse(s) }

// Repository strips the tag and digest of a canonical image reference.
func Repository(ref string) string { return fetch.Repository(ref) }

// PayloadTagVersion is the version the tag of a payload pull spec of arch names ("" when it
// is pinned by digest alone or its tag names no version: its release-metadata tells), or
// the error that makes ref no reference.
func PayloadTagVersion(ref, arch string) (string, error) {
	tag, err := fetch.TagOf(ref)
	if err != nil {
		return "", err
	}
	return tags.PayloadVersion(tag, arch), nil
}

// CheckRef validates an image reference flag value without contacting anything.
func CheckRef(s string) error { return fetch.CheckRef(s) }

// CheckRepo validates a repository flag value without contacting anything.
func CheckRepo(s string) error { return fetch.CheckRepo(s) }

// Totals counts every blob this Source has read so far — downloaded (with compressed
// bytes) or served from the cache — whatever call asked for it, Resolve included.
func (s *Source) Totals() FetchStats { return s.client.Totals() }

// ListTags lists a repository's tags (every page), from the cache's record when offline.
func (s *Source) ListTags(ctx context.Context, repository string) ([]string, error) {
	return s.client.ListTags(ctx, repository)
}

// ImageDigests resolves image to its list digest and the child digest of each arch
// (MicroShift names); a missing arch is an error naming the image and arch.
func (s *Source) ImageDigests(ctx context.Context, image string, arches []string) (*ImageDigests, error) {
	return s.client.ImageDigests(ctx, image, arches)
}

// FetchURL downloads an http(s) URL (the snapshot-assets tarball) through the cache and
// returns a reader over the cached copy; offline it serves the last download.
func (s *Source) FetchURL(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	return s.client.FetchURL(ctx, rawURL)
}

// Payload file paths (in the image) FetchPayload stops at.
const (
	ImageReferencesFile = payload.Dir + "/" + payload.ImageReferencesFile
	ReleaseMetadataFile = payload.Dir + "/" + payload.ReleaseMetadataFile
)

// bundlePrefixes are the bundle image directories lvms-rebase reads.
var bundlePrefixes = []string{"manifests/", "metadata/"}

// FetchBundle writes the bundle's manifests/ and metadata/ into dir, applying every layer
// in order with whiteouts. A manifest list is narrowed to linux/amd64 (or its only entry).
func (s *Source) FetchBundle(ctx context.Context, b BundleRef, dir string) (*FetchStats, error) {
	st, _, err := s.client.Extract(ctx, fetch.Request{Kind: "bundle", Ref: b.Ref, Digest: b.Digest, Prefixes: bundlePrefixes}, dir)
	return st, err
}

// FetchPayload writes the payload's release-manifests/ into dir. It reads the manifest, the
// config (to check the arch) and then layers from the top down, stopping as soon as
// image-references and release-metadata are found — normally after the top layer only.
func (s *Source) FetchPayload(ctx context.Context, p PayloadRef, dir string) (*FetchStats, error) {
	st, _, err := s.fetchPayload(ctx, p, dir, nil)
	return st, err
}

func (s *Source) fetchPayload(ctx context.Context, p PayloadRef, dir string, onFile func(string)) (*FetchStats, *fetch.Image, error) {
	var onImage func(digest, list string)
	if hook := s.opts.OnPayloadDigest; hook != nil {
		onImage = func(digest, list string) { hook(ctx, p.Arch, p.Ref, digest, list) }
	}
	return s.client.Extract(ctx, fetch.Request{Kind: "payload", Ref: p.Ref, Digest: p.Digest, Arch: p.Arch,
		Prefixes: []string{payload.Dir + "/"}, Want: []string{ImageReferencesFile, ReleaseMetadataFile}, OnFile: onFile, OnImage: onImage}, dir)
}

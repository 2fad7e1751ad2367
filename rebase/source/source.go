// Package source is everything lvms-rebase does against registries: reference parsing
// (including oci: layouts), auth keychains, --mirror and IDMS rewriting, tag resolution,
// per-arch digests, selective fetch of the bundle and the payload's release-manifests/,
// a verified content-addressed cache, and retries.
//
// Every output records canonical (un-mirrored) references; mirrors only change where bytes
// are pulled from.
package source

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// Defaults for Options.
const (
	DefaultBundleRepo  = "registry.redhat.io/lvms4/lvms-operator-bundle"
	DefaultReleaseRepo = "quay.io/openshift-release-dev/ocp-release"
)

// DefaultArches are the MicroShift architectures resolved when Options.Arches is empty.
var DefaultArches = arch.Shipped()

// Options configures a Source. The zero value plus defaults talks to the public registries.
type Options struct {
	// BundleRepo is where bundle tags are listed (default DefaultBundleRepo).
	BundleRepo string
	// ReleaseRepo is where payload tags are listed (default DefaultReleaseRepo).
	ReleaseRepo string
	// BundleRef pins the bundle (tag, digest or oci:PATH[:TAG|@DIGEST]) and skips resolution.
	BundleRef string
	// ReleaseRefs pins payloads per MicroShift arch (x86_64, aarch64) and skips resolution.
	ReleaseRefs map[string]string
	// Arches are MicroShift arch names (default DefaultArches).
	Arches []string

	// AuthFile is --authfile; empty means REGISTRY_AUTH_FILE, ~/.pull-secret.json, podman's
	// auth.json, docker's config.json, in that order.
	AuthFile string
	// Mirrors are --mirror SRC=DST prefix rewrites applied to every pull.
	Mirrors []Mirror
	// IDMSFile is an ImageDigestMirrorSet or ImageContentSourcePolicy YAML; its mirrors
	// apply to digest pulls only, as with oc --idms-file.
	IDMSFile string
	// Insecure lists HOST[:PORT]s reachable over plain HTTP or unverified TLS.
	Insecure []string

	// CacheDir holds the content-addressed cache (default $XDG_CACHE_HOME/lvms-rebase).
	CacheDir string
	// Offline serves everything from the cache and oci: layouts; tags come from the cache.
	Offline bool

	// AllowPrerelease lets payload resolution pick rc/ec tags.
	AllowPrerelease bool
	// AllowVersionSkew turns version mismatches (CSV minor, release-metadata) into warnings.
	AllowVersionSkew bool

	// MaxFileSize and MaxImageSize cap extraction (defaults 64 MiB and 512 MiB).
	MaxFileSize, MaxImageSize int64
	// MaxTagPages caps the tags/list pages read for one repository (default
	// DefaultMaxTagPages); MaxTagListBytes caps its tag names and any one page's body
	// (DefaultMaxTagListBytes); MaxManifestSize caps a manifest (DefaultMaxManifestSize).
	// A registry past a bound fails the run with a LimitError naming the repository.
	MaxTagPages                      int
	MaxTagListBytes, MaxManifestSize int64

	// Logger receives progress and warnings (default: discard).
	Logger *slog.Logger
	// Progress, when set, is called while blobs of at least ProgressMinBytes download:
	// at most every ProgressInterval and once when a blob finishes. Downloads run in
	// parallel, so it may be called from several goroutines at once.
	Progress func(Progress)
	// Transport is the base HTTP transport (tests); retries and insecure handling wrap it.
	Transport http.RoundTripper
	// Retry tunes retries (zero value: defaults).
	Retry RetryOptions
	// Concurrency bounds the parallel requests of one fan-out (relatedImages, blobs of one
	// image, snapshot files); default DefaultConcurrency.
	Concurrency int
}

// DefaultConcurrency is Options.Concurrency's default: enough to overlap round trips to a
// distant registry, few enough to stay polite to it.
const DefaultConcurrency = 8

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

// Source pulls images according to its Options. It is safe for concurrent use.
type Source struct {
	opts     Options
	log      *slog.Logger
	keychain *fileKeychain
	client   *http.Client
	base     http.RoundTripper
	cache    *cache
	idms     []idmsRule
	arches   []string

	// puller shares ggcr's per-repository transports (ping, token) between calls, so each
	// repository costs one ping per run rather than one per request.
	puller *remote.Puller
	// tagLists memoises tag listings by (mirrored) repository for the life of the Source.
	tagLists sync.Map

	ociMu  sync.Mutex
	ociIdx map[string]*ociLayout

	totalsMu sync.Mutex
	totals   FetchStats
}

// tally adds one blob to Totals.
func (s *Source) tally(st blobStat) {
	s.totalsMu.Lock()
	defer s.totalsMu.Unlock()
	s.totals.BytesFetched += st.fetched
	if st.cached {
		s.totals.BlobsCached++
	} else {
		s.totals.BlobsFetched++
	}
}

// Totals counts every blob this Source has read so far — downloaded (with compressed
// bytes) or served from the cache — whatever call asked for it, Resolve included.
func (s *Source) Totals() FetchStats {
	s.totalsMu.Lock()
	defer s.totalsMu.Unlock()
	return FetchStats{BytesFetched: s.totals.BytesFetched, BlobsFetched: s.totals.BlobsFetched, BlobsCached: s.totals.BlobsCached}
}

// BundleRef is the chosen bundle image.
type BundleRef struct {
	// Ref is the canonical reference (repo:tag, repo@digest or oci:…).
	Ref string `json:"ref"`
	// Digest is the manifest digest the reference resolved to.
	Digest string `json:"digest"`
	// Version is the bundle tag (e.g. v4.18.4-2), or the CSV version for digest pins.
	Version string `json:"version"`
	// CSVVersion is the CSV's spec.version.
	CSVVersion string `json:"csvVersion,omitempty"`
	// skew is the warning about a CSV minor other than the one asked for (allowed skew);
	// ResolveIn moves it into Resolution.Warnings.
	skew string
}

// PayloadRef is the chosen release payload of one arch.
type PayloadRef struct {
	// Arch is the MicroShift arch name (x86_64, aarch64).
	Arch string `json:"arch"`
	// Ref is the canonical reference.
	Ref string `json:"ref"`
	// Digest is the single-arch image digest (the child when Ref is a manifest list).
	Digest string `json:"digest"`
	// ListDigest is set when Ref names a manifest list (e.g. a -multi payload).
	ListDigest string `json:"listDigest,omitempty"`
	// Version is release-metadata's version.
	Version string `json:"version"`
}

// ArchDigest is one arch's image digest.
type ArchDigest struct {
	Arch   string `json:"arch"`
	Digest string `json:"digest"`
}

// ImageDigests are the digests of one (usually multi-arch) image.
type ImageDigests struct {
	// Name is the relatedImages name, when the image came from a CSV.
	Name string `json:"name,omitempty"`
	// Image is the canonical reference as given.
	Image string `json:"image"`
	// ListDigest is the manifest-list digest; empty for a single-arch image.
	ListDigest string `json:"listDigest,omitempty"`
	// Arches holds the per-arch child digests in the order requested.
	Arches []ArchDigest `json:"arches"`
}

// For returns the digest recorded for arch.
func (d *ImageDigests) For(arch string) (string, bool) {
	for _, a := range d.Arches {
		if a.Arch == arch {
			return a.Digest, true
		}
	}
	return "", false
}

// Resolution is what Resolve picked for one OpenShift minor.
type Resolution struct {
	OCP           string         `json:"ocp"`
	Bundle        BundleRef      `json:"bundle"`
	Payloads      []PayloadRef   `json:"payloads"`
	RelatedImages []ImageDigests `json:"relatedImages"`
	// LVMS is the LVMS minor chosen for OCP and why (set by the caller that chose it).
	LVMS *era.Choice `json:"lvms,omitempty"`
	// PayloadRule says how the payloads were chosen: "newest" (newest GA z common to every
	// arch), "pinned" (--ocp-release*, or the lock) or "tree" (last_rebase.sh).
	PayloadRule string `json:"payloadRule,omitempty"`
	// Warnings are things a maintainer should know (a newer z for some arches only, …).
	Warnings []string `json:"warnings,omitempty"`
	// Extracted is what ResolveIn kept unpacked for the fetch phases (nil from Resolve).
	Extracted *Extracted `json:"-"`
}

// FetchStats counts what one fetch cost.
type FetchStats struct {
	// Image is the canonical reference fetched.
	Image string `json:"image"`
	// BytesFetched is compressed blob bytes downloaded from the network.
	BytesFetched int64 `json:"bytesFetched"`
	// BlobsFetched and BlobsCached count blobs downloaded vs served from the cache.
	BlobsFetched int `json:"blobsFetched"`
	BlobsCached  int `json:"blobsCached"`
	// LayersRead is how many layers were opened; LayersTotal how many the image has.
	LayersRead  int `json:"layersRead"`
	LayersTotal int `json:"layersTotal"`
	// Files are the extracted paths, sorted.
	Files []string `json:"files"`

	counted map[string]bool // blobs already added, so a prefetched blob counts once
}

// add counts blob h once per fetch: a blob prefetched in parallel and then read from the
// cache by the extraction is one download, not a download and a cache hit.
func (f *FetchStats) add(h string, o blobStat) {
	if f.counted[h] {
		return
	}
	if f.counted == nil {
		f.counted = map[string]bool{}
	}
	f.counted[h] = true
	f.BytesFetched += o.fetched
	if o.cached {
		f.BlobsCached++
	} else {
		f.BlobsFetched++
	}
}

// GoArch maps a MicroShift arch name to the Go/OCI name used by registries; Go names are
// accepted as they are. The names live in internal/arch.
func GoArch(name string) (string, error) { return arch.GoArch(name) }

// New validates opts and builds a Source. It reads the IDMS file and locates the auth files
// but contacts no registry.
func New(opts Options) (*Source, error) {
	opts = withDefaults(opts)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	arches, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Source{opts: opts, log: log, arches: arches, ociIdx: map[string]*ociLayout{}}
	if opts.IDMSFile != "" {
		if s.idms, err = loadIDMS(opts.IDMSFile); err != nil {
			return nil, err
		}
	}
	if s.keychain, err = newFileKeychain(opts.AuthFile, log); err != nil {
		return nil, err
	}
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	s.cache = &cache{dir: dir}
	s.base = opts.Transport
	if s.base == nil {
		s.base = http.DefaultTransport
	}
	rt := &retryTransport{inner: newInsecureTransport(s.base, opts.Insecure), opts: opts.Retry, log: log}
	s.client = &http.Client{Transport: &limitTransport{inner: rt, tagList: opts.MaxTagListBytes, manifestSize: opts.MaxManifestSize}}
	if s.puller, err = remote.NewPuller(s.baseRemoteOpts()...); err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	return s, nil
}

// withDefaults fills the options left zero with the defaults.
func withDefaults(opts Options) Options {
	if opts.BundleRepo == "" {
		opts.BundleRepo = DefaultBundleRepo
	}
	if opts.ReleaseRepo == "" {
		opts.ReleaseRepo = DefaultReleaseRepo
	}
	if len(opts.Arches) == 0 {
		opts.Arches = DefaultArches
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = extract.DefaultMaxFileSize
	}
	if opts.MaxImageSize <= 0 {
		opts.MaxImageSize = extract.DefaultMaxImageSize
	}
	if opts.MaxTagPages <= 0 {
		opts.MaxTagPages = DefaultMaxTagPages
	}
	if opts.MaxTagListBytes <= 0 {
		opts.MaxTagListBytes = DefaultMaxTagListBytes
	}
	if opts.MaxManifestSize <= 0 {
		opts.MaxManifestSize = DefaultMaxManifestSize
	}
	if opts.Retry.Attempts <= 0 {
		opts.Retry.Attempts = 5
	}
	if opts.Retry.Backoff <= 0 {
		opts.Retry.Backoff = 200 * time.Millisecond
	}
	if opts.Retry.MaxBackoff <= 0 {
		opts.Retry.MaxBackoff = 30 * time.Second
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Retry.StallTimeout <= 0 {
		opts.Retry.StallTimeout = time.Minute
	}
	return opts
}

// checkOptions checks the architectures, pins and mirrors, and returns the architectures
// without duplicates, in the order given.
func checkOptions(opts Options) ([]string, error) {
	seen := map[string]bool{}
	var arches []string
	for _, a := range opts.Arches {
		if _, err := GoArch(a); err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			arches = append(arches, a)
		}
	}
	for a := range opts.ReleaseRefs {
		if _, err := GoArch(a); err != nil {
			return nil, fmt.Errorf("release pin: %w", err)
		}
	}
	for _, m := range opts.Mirrors {
		if m.Source == "" || m.Mirror == "" {
			return nil, fmt.Errorf("mirror %q: want SRC=DST", m.String())
		}
	}
	return arches, nil
}

// DefaultCacheDir is $XDG_CACHE_HOME/lvms-rebase (os.UserCacheDir's answer).
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating a cache directory (set %s): %w", option.CacheDir, err)
	}
	return filepath.Join(d, "lvms-rebase"), nil
}

// Concurrency is the bound on parallel requests of one fan-out.
func (s *Source) Concurrency() int { return s.opts.Concurrency }

// Arches returns the MicroShift arch names this Source resolves, in order.
func (s *Source) Arches() []string { return append([]string(nil), s.arches...) }

// authn keychain type assertion keeps the interface honest.
var _ authn.Keychain = (*fileKeychain)(nil)

func isInsecureHost(insecure []string, host string) bool {
	for _, h := range insecure {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
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

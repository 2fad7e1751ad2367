// Package source resolves what a run rebases onto: for one OpenShift minor, the LVMS
// operator bundle and the release payload of each arch, with the per-arch digests of every
// image the bundle relates. It is the façade over its sub-packages, each with one job:
// auth (credential files), mirror (prefix and IDMS mirrors), tags (tag policy), cache (the
// verified content-addressed store), transport (retries, TLS policy, bounds) and fetch (the
// registry client and extraction). What the images say is read by rebase/bundle and
// rebase/payload; resolution keeps what they parsed so nothing is extracted or parsed twice.
//
// Every output records canonical (un-mirrored) references; mirrors only change where bytes
// are pulled from.
package source

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/auth"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/fetch"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
	"golang.org/x/sync/singleflight"
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
	// OnPayloadDigest, when set, hears each arch's payload digest (and the list's it was
	// chosen from) as soon as its manifest is read, before its layers download, with the
	// resolution's context: a caller can verify its signatures meanwhile. Not verified yet.
	OnPayloadDigest func(ctx context.Context, arch, ref, digest, listDigest string)
}

// DefaultConcurrency is Options.Concurrency's default: enough to overlap round trips to a
// distant registry, few enough to stay polite to it.
const DefaultConcurrency = 8

// Source resolves and pulls images according to its Options. It is safe for concurrent use.
type Source struct {
	opts   Options
	log    *slog.Logger
	arches []string
	client *fetch.Client
	// sigs shares one fetch of a signature among the verifications that ask for it at once
	// (the per-arch digests of one list each look at the list's .sig).
	sigs singleflight.Group
}

// BundleRef is the chosen bundle image.
type BundleRef struct {
	// Ref is the canonical reference (repo:tag, repo@digest or oci:…).
	Ref string
	// Digest is the manifest digest the reference resolved to.
	Digest string
	// Version is the bundle tag (e.g. v4.18.4-2), or the CSV version for digest pins.
	Version string
	// CSVVersion is the CSV's spec.version.
	CSVVersion string
	// skew is the warning about a CSV minor other than the one asked for (allowed skew);
	// Resolve moves it into Resolution.Warnings.
	skew string
}

// PayloadRef is the chosen release payload of one arch.
type PayloadRef struct {
	// Arch is the MicroShift arch name (x86_64, aarch64).
	Arch string
	// Ref is the canonical reference.
	Ref string
	// Digest is the single-arch image digest (the child when Ref is a manifest list).
	Digest string
	// ListDigest is set when Ref names a manifest list (e.g. a -multi payload).
	ListDigest string
	// Version is release-metadata's version.
	Version string
}

// Resolution is what Resolve picked for one OpenShift minor.
type Resolution struct {
	OCP           string
	Bundle        BundleRef
	Payloads      []PayloadRef
	RelatedImages []ImageDigests
	// LVMS is the LVMS minor chosen for OCP and why (set by the caller that chose it).
	LVMS *era.Choice
	// PayloadRule says how the payloads were chosen: "newest" (newest GA z common to every
	// arch), "pinned" (--ocp-release*, or the lock) or "tree" (last_rebase.sh).
	PayloadRule string
	// Warnings are things a maintainer should know (a newer z for some arches only, …).
	Warnings []string
	// Content is what resolution read of the bundle and the payloads, parsed, for the
	// run's later steps.
	Content *Content
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
		log = slog.New(slog.DiscardHandler)
	}
	arches, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	fo := fetch.Options{Mirrors: opts.Mirrors, Insecure: opts.Insecure, Offline: opts.Offline,
		MaxFileSize: opts.MaxFileSize, MaxImageSize: opts.MaxImageSize, MaxTagPages: opts.MaxTagPages,
		MaxTagListBytes: opts.MaxTagListBytes, Concurrency: opts.Concurrency, Retry: opts.Retry,
		Progress: opts.Progress, Log: log}
	if opts.IDMSFile != "" {
		if fo.IDMS, err = mirror.LoadIDMS(opts.IDMSFile); err != nil {
			return nil, &option.PathError{Option: option.IDMSFile, Path: opts.IDMSFile, Err: err}
		}
	}
	if fo.Keychain, err = auth.New(opts.AuthFile, log); err != nil {
		return nil, err
	}
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	fo.Cache = cache.New(dir)
	fo.Transport = transport.New(opts.Transport, transport.Options{Insecure: opts.Insecure, Retry: opts.Retry,
		MaxTagListBytes: opts.MaxTagListBytes, MaxManifestSize: opts.MaxManifestSize, Log: log})
	c, err := fetch.New(fo)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, log: log, arches: arches, client: c}, nil
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
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	opts.Retry = opts.Retry.WithDefaults()
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
func DefaultCacheDir() (string, error) { return cache.DefaultDir() }

// Concurrency is the bound on parallel requests of one fan-out.
func (s *Source) Concurrency() int { return s.opts.Concurrency }

// Arches returns the MicroShift arch names this Source resolves, in order.
func (s *Source) Arches() []string { return append([]string(nil), s.arches...) }

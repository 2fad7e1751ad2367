// Package fetch is lvms-rebase's registry client: it parses image references (including
// oci: layouts), lists tags, resolves tags and digests through mirrors, downloads manifests
// and blobs into the verified cache (in parallel, with retries and progress), narrows
// manifest lists to one platform, and extracts selected directories of an image. It also
// downloads plain http(s) URLs (the snapshot-assets archive) through the same cache.
//
// It reads images but never interprets their content: what a bundle or payload says is
// for rebase/bundle and rebase/payload.
package fetch

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/rebase/source/auth"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// Options configure a Client. Every field is required unless it says otherwise: the
// defaults are the caller's (rebase/source fills them).
type Options struct {
	// Mirrors are prefix rewrites applied to every pull; IDMS rules apply to digest pulls.
	Mirrors []mirror.Mirror
	IDMS    []mirror.Rule
	// Insecure lists HOST[:PORT]s reachable over plain HTTP or unverified TLS.
	Insecure []string
	// Offline serves everything from the cache and oci: layouts.
	Offline bool
	// MaxFileSize and MaxImageSize cap extraction and URL downloads.
	MaxFileSize, MaxImageSize int64
	// MaxTagPages caps the tags/list pages read for one repository.
	MaxTagPages int
	// MaxTagListBytes caps a repository's tag names.
	MaxTagListBytes int64
	// Concurrency bounds the parallel requests of one fan-out.
	Concurrency int
	// Retry bounds operation-level retries (the transport retries requests itself).
	Retry transport.RetryOptions
	// Progress, when set, hears about long blob downloads (see Progress).
	Progress func(Progress)
	// Transport is the complete HTTP transport (transport.New's).
	Transport http.RoundTripper
	// Keychain supplies credentials; Cache stores what is downloaded.
	Keychain *auth.Keychain
	Cache    *cache.Cache
	// Log receives warnings (optional).
	Log *slog.Logger
}

// Client pulls images according to its Options. It is safe for concurrent use.
type Client struct {
	opts     Options
	log      *slog.Logger
	keychain *auth.Keychain
	client   *http.Client
	cache    *cache.Cache

	// puller shares ggcr's per-repository transports (ping, token) between calls, so each
	// repository costs one ping per run rather than one per request.
	puller *remote.Puller
	// tagLists memoises tag listings by (mirrored) repository for the life of the Client.
	tagLists sync.Map

	ociMu  sync.Mutex
	ociIdx map[string]*ociLayout

	totalsMu sync.Mutex
	totals   Stats
}

// New builds a Client; it contacts no registry.
func New(opts Options) (*Client, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{opts: opts, log: log, keychain: opts.Keychain, cache: opts.Cache, ociIdx: map[string]*ociLayout{},
		client: &http.Client{Transport: opts.Transport, CheckRedirect: transport.CheckRedirect}}
	var err error
	if c.puller, err = remote.NewPuller(c.baseRemoteOpts()...); err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	return c, nil
}

// tally adds one blob to Totals.
func (c *Client) tally(st blobStat) {
	c.totalsMu.Lock()
	defer c.totalsMu.Unlock()
	c.totals.BytesFetched += st.fetched
	if st.cached {
		c.totals.BlobsCached++
	} else {
		c.totals.BlobsFetched++
	}
}

// Totals counts every blob this Client has read so far — downloaded (with compressed
// bytes) or served from the cache — whatever call asked for it.
func (c *Client) Totals() Stats {
	c.totalsMu.Lock()
	defer c.totalsMu.Unlock()
	return Stats{BytesFetched: c.totals.BytesFetched, BlobsFetched: c.totals.BlobsFetched, BlobsCached: c.totals.BlobsCached}
}

// Stats counts what one fetch cost.
type Stats struct {
	// Image is the canonical reference fetched.
	Image string
	// BytesFetched is compressed blob bytes downloaded from the network.
	BytesFetched int64
	// BlobsFetched and BlobsCached count blobs downloaded vs served from the cache.
	BlobsFetched int
	BlobsCached  int
	// LayersRead is how many layers were opened; LayersTotal how many the image has.
	LayersRead  int
	LayersTotal int
	// Files are the extracted paths, sorted.
	Files []string

	counted map[string]bool // blobs already added, so a prefetched blob counts once
}

// add counts blob h once per fetch: a blob prefetched in parallel and then read from the
// cache by the extraction is one download, not a download and a cache hit.
func (f *Stats) add(h string, o blobStat) {
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

// ArchDigest is one arch's image digest.
type ArchDigest struct {
	Arch   string
	Digest string
}

// ImageDigests are the digests of one (usually multi-arch) image.
type ImageDigests struct {
	// Name is the relatedImages name, when the image came from a CSV.
	Name string
	// Image is the canonical reference as given.
	Image string
	// ListDigest is the manifest-list digest; empty for a single-arch image.
	ListDigest string
	// Arches holds the per-arch child digests in the order requested.
	Arches []ArchDigest
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

// Package cache is lvms-rebase's content-addressed store of registry blobs, manifests and
// downloads: every entry is verified against its digest when read and written atomically,
// so concurrent runs sharing a cache directory never see partial or corrupt content. It
// also records what tags pointed at, for offline runs.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// Cache is a content-addressed store: blobs and manifests under blobs/<alg>/<hex>, written
// to a temporary file and renamed into place, so two processes filling the same cache never
// see a partial file. Every read is re-hashed; a corrupt entry is deleted and refetched.
// Tag → digest records live apart (tags/) and are consulted only offline.
type Cache struct {
	dir string
	// tagsMu serialises this process's tag-record updates: parallel fetches (two arches'
	// payload tags in one repository) must not lose each other's entries.
	tagsMu sync.Mutex
}

// New returns the cache rooted at dir (created as entries are written).
func New(dir string) *Cache { return &Cache{dir: dir} }

// DefaultDir is $XDG_CACHE_HOME/lvms-rebase (os.UserCacheDir's answer).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating a cache directory (set %s): %w", option.CacheDir, err)
	}
	return filepath.Join(d, "lvms-rebase"), nil
}

// Dir is the cache's root directory, for messages.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) blobPath(h v1.Hash) string {
	return filepath.Join(c.dir, "blobs", h.Algorithm, h.Hex)
}

// Get returns the verified path of a cached blob, or "" when absent (or corrupt, in which
// case the entry is removed).
func (c *Cache) Get(h v1.Hash) (string, error) {
	p := c.blobPath(h)
	// A blob is hashed as it is read, so only its type matters: a FIFO or a link to a
	// device put into the cache is refused, never read.
	f, _, err := safefile.Open(p, safefile.Options{Max: safefile.NoSizeCap})
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading cache entry %s: %w", p, err)
	}
	defer f.Close()
	got, _, err := v1.SHA256(f)
	if err != nil {
		return "", fmt.Errorf("reading cache entry %s: %w", p, err)
	}
	if got != h {
		// Someone truncated or edited it: drop it so the caller refetches.
		_ = os.Remove(p)
		return "", nil
	}
	return p, nil
}

// ReadSmall returns a verified cached manifest's bytes.
func (c *Cache) ReadSmall(h v1.Hash) ([]byte, bool) {
	p := c.blobPath(h)
	b, err := safefile.ReadFile(p, safefile.Options{})
	if err != nil {
		return nil, false
	}
	got, _, err := v1.SHA256(bytes.NewReader(b))
	if err != nil || got != h {
		_ = os.Remove(p)
		return nil, false
	}
	return b, true
}

// Put streams r into the cache, verifying it hashes to h, and returns the final path and
// the byte count. A mismatch leaves nothing behind and returns a *DigestMismatchError.
func (c *Cache) Put(h v1.Hash, r io.Reader) (string, int64, error) {
	if h.Algorithm != "sha256" {
		return "", 0, fmt.Errorf("unsupported digest algorithm %q", h.Algorithm)
	}
	final := c.blobPath(h)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", 0, fmt.Errorf("creating cache directory: %w", err)
	}
	// Entries are verified whenever they are read, so they need no fsync (a cold run writes
	// hundreds); the rename still keeps a concurrent reader from seeing a partial blob.
	f, err := atomicfile.Options{NoSync: true}.Create(final, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("creating cache file: %w", err)
	}
	defer func() { _ = f.Discard() }() // after Commit, a no-op
	hasher := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, hasher), r)
	if err != nil {
		return "", n, err
	}
	if got := hex.EncodeToString(hasher.Sum(nil)); got != h.Hex {
		return "", n, &DigestMismatchError{want: h.String(), got: "sha256:" + got, n: n}
	}
	if err := f.Commit(); err != nil {
		return "", n, fmt.Errorf("storing cache entry: %w", err)
	}
	return final, n, nil
}

// DigestMismatchError is content that did not hash to the digest it was stored under.
type DigestMismatchError struct {
	want, got string
	n         int64
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("content does not match its digest: want %s, got %s after %d bytes", e.want, e.got, e.n)
}

// maxTagRecord caps a tag record read back: the tag names (transport.DefaultMaxTagListBytes)
// with their JSON and the digests recorded beside them.
const maxTagRecord = 64 << 20

// TagRecord is what the cache remembers about a repository's tags.
type TagRecord struct {
	Repo    string            `json:"repo"`
	Tags    []string          `json:"tags,omitempty"`
	Digests map[string]string `json:"digests,omitempty"`
}

func (c *Cache) tagPath(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:])+".json")
}

// ReadTags returns repo's tag record (empty when none was written).
func (c *Cache) ReadTags(repo string) (*TagRecord, error) {
	b, err := safefile.ReadFile(c.tagPath(repo), safefile.Options{Max: maxTagRecord})
	if errors.Is(err, fs.ErrNotExist) {
		return &TagRecord{Repo: repo, Digests: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var r TagRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cache tag record for %s: %w", repo, err)
	}
	if r.Digests == nil {
		r.Digests = map[string]string{}
	}
	return &r, nil
}

// UpdateTags read-modify-writes a tag record atomically (last writer wins, which is fine:
// records are only hints for --offline).
func (c *Cache) UpdateTags(repo string, f func(*TagRecord)) error {
	c.tagsMu.Lock()
	defer c.tagsMu.Unlock()
	r, err := c.ReadTags(repo)
	if err != nil {
		r = &TagRecord{Repo: repo, Digests: map[string]string{}}
	}
	f(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return c.WriteFile(c.tagPath(repo), b)
}

// WriteFile writes p (a path under the cache) atomically, unsynced like the blobs: tag
// records are hints for --offline and URL records name a digest that is verified.
func (c *Cache) WriteFile(p string, b []byte) error {
	_, err := atomicfile.Options{NoSync: true}.WriteFile(p, b, 0o600)
	return err
}

// URLPath is where the digest of url's last download is recorded.
func (c *Cache) URLPath(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.dir, "urls", hex.EncodeToString(sum[:]))
}

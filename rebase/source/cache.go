package source

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
)

// cache is a content-addressed store: blobs and manifests under blobs/<alg>/<hex>, written
// to a temporary file and renamed into place, so two processes filling the same cache never
// see a partial file. Every read is re-hashed; a corrupt entry is deleted and refetched.
// Tag → digest records live apart (tags/) and are consulted only offline.
type cache struct {
	dir string
	// tagsMu serialises this process's tag-record updates: parallel fetches (two arches'
	// payload tags in one repository) must not lose each other's entries.
	tagsMu sync.Mutex
}

func (c *cache) blobPath(h v1.Hash) string {
	return filepath.Join(c.dir, "blobs", h.Algorithm, h.Hex)
}

// get returns the verified path of a cached blob, or "" when absent (or corrupt, in which
// case the entry is removed).
func (c *cache) get(h v1.Hash) (string, error) {
	p := c.blobPath(h)
	f, err := os.Open(p)
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

// readSmall returns a verified cached manifest's bytes.
func (c *cache) readSmall(h v1.Hash) ([]byte, bool) {
	p := c.blobPath(h)
	b, err := os.ReadFile(p)
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

// put streams r into the cache, verifying it hashes to h, and returns the final path and
// the byte count. A mismatch leaves nothing behind and returns errDigestMismatch.
func (c *cache) put(h v1.Hash, r io.Reader) (string, int64, error) {
	if h.Algorithm != "sha256" {
		return "", 0, fmt.Errorf("unsupported digest algorithm %q", h.Algorithm)
	}
	final := c.blobPath(h)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", 0, fmt.Errorf("creating cache directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(final), "."+h.Hex+".tmp-*")
	if err != nil {
		return "", 0, fmt.Errorf("creating cache file: %w", err)
	}
	defer os.Remove(tmp.Name())
	hasher := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, hasher), r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", n, err
	}
	if got := hex.EncodeToString(hasher.Sum(nil)); got != h.Hex {
		return "", n, &digestMismatchError{want: h.String(), got: "sha256:" + got, n: n}
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", n, fmt.Errorf("storing cache entry: %w", err)
	}
	return final, n, nil
}

type digestMismatchError struct {
	want, got string
	n         int64
}

func (e *digestMismatchError) Error() string {
	return fmt.Sprintf("content does not match its digest: want %s, got %s after %d bytes", e.want, e.got, e.n)
}

// tagRecord is what the cache remembers about a repository's tags.
type tagRecord struct {
	Repo    string            `json:"repo"`
	Tags    []string          `json:"tags,omitempty"`
	Digests map[string]string `json:"digests,omitempty"`
}

func (c *cache) tagPath(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:])+".json")
}

func (c *cache) readTags(repo string) (*tagRecord, error) {
	b, err := os.ReadFile(c.tagPath(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return &tagRecord{Repo: repo, Digests: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var r tagRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cache tag record for %s: %w", repo, err)
	}
	if r.Digests == nil {
		r.Digests = map[string]string{}
	}
	return &r, nil
}

// updateTags read-modify-writes a tag record atomically (last writer wins, which is fine:
// records are only hints for --offline).
func (c *cache) updateTags(repo string, f func(*tagRecord)) error {
	c.tagsMu.Lock()
	defer c.tagsMu.Unlock()
	r, err := c.readTags(repo)
	if err != nil {
		r = &tagRecord{Repo: repo, Digests: map[string]string{}}
	}
	f(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return c.writeFile(c.tagPath(repo), b)
}

func (c *cache) writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

func (c *cache) urlPath(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.dir, "urls", hex.EncodeToString(sum[:]))
}

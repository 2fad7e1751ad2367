package testregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const refNameAnnotation = "org.opencontainers.image.ref.name"

// blobStore serves fixture blobs straight from the fixture fs.FS (so seeding copies no
// layer bytes) and keeps blobs pushed at run time in memory. Blobs are global, not
// per repository: fixtures share configs and layers across repositories.
type blobStore struct {
	fsys  fs.FS
	mu    sync.RWMutex
	files map[string]blobFile // digest → file in fsys
	mem   map[string][]byte
}

type blobFile struct {
	path string
	size int64
}

func newBlobStore(fsys fs.FS) *blobStore {
	return &blobStore{fsys: fsys, files: map[string]blobFile{}, mem: map[string][]byte{}}
}

func (b *blobStore) Stat(_ context.Context, _ string, h v1.Hash) (int64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if f, ok := b.files[h.String()]; ok {
		return f.size, nil
	}
	if m, ok := b.mem[h.String()]; ok {
		return int64(len(m)), nil
	}
	return 0, registry.ErrNotFound
}

func (b *blobStore) Get(_ context.Context, _ string, h v1.Hash) (io.ReadCloser, error) {
	b.mu.RLock()
	f, ok := b.files[h.String()]
	m, okm := b.mem[h.String()]
	b.mu.RUnlock()
	if ok {
		return b.fsys.Open(f.path)
	}
	if okm {
		return io.NopCloser(bytes.NewReader(m)), nil
	}
	return nil, registry.ErrNotFound
}

func (b *blobStore) Put(_ context.Context, _ string, h v1.Hash, rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.mem[h.String()] = data
	b.mu.Unlock()
	return nil
}

// seeder loads OCI layouts from an fs.FS into the registry handler, in process.
type seeder struct {
	fsys    fs.FS
	blobs   *blobStore
	handler http.Handler
	sign    *signer // hears what each repository holds (nil: nobody listens)
	count   int
}

// findLayouts returns the directories under images/ that hold an oci-layout file, sorted.
func findLayouts(fsys fs.FS) ([]string, error) {
	var dirs []string
	err := fs.WalkDir(fsys, "images", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path.Base(p) == "blobs" {
			return fs.SkipDir
		}
		if !d.IsDir() && d.Name() == "oci-layout" {
			dirs = append(dirs, path.Dir(p))
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}

func (s *seeder) seedLayout(dir string) error {
	repo := strings.TrimPrefix(dir, "images/")
	// Register every blob of the layout first; manifests are read from the same place.
	blobDir := path.Join(dir, "blobs", "sha256")
	entries, err := fs.ReadDir(s.fsys, blobDir)
	if err != nil {
		return fmt.Errorf("layout %s: reading %s: %w", dir, blobDir, err)
	}
	s.blobs.mu.Lock()
	for _, e := range entries {
		if _, ok := s.blobs.files["sha256:"+e.Name()]; ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			s.blobs.mu.Unlock()
			return fmt.Errorf("layout %s: blob %s: %w", dir, e.Name(), err)
		}
		s.blobs.files["sha256:"+e.Name()] = blobFile{path: path.Join(blobDir, e.Name()), size: info.Size()}
	}
	s.blobs.mu.Unlock()

	raw, err := fs.ReadFile(s.fsys, path.Join(dir, "index.json"))
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("layout %s: decoding index.json: %w", dir, err)
	}
	done := map[string]bool{}
	for _, d := range idx.Manifests {
		if err := s.putTree(repo, dir, d, done); err != nil {
			return err
		}
		if tag := d.Annotations[refNameAnnotation]; tag != "" {
			if err := s.putManifest(repo, dir, d, tag); err != nil {
				return err
			}
		}
	}
	return nil
}

// putTree uploads a manifest by digest after its children (the registry rejects an
// index whose children are unknown).
func (s *seeder) putTree(repo, dir string, d v1.Descriptor, done map[string]bool) error {
	if done[d.Digest.String()] {
		return nil
	}
	if d.MediaType.IsIndex() {
		raw, err := s.readBlob(dir, d.Digest)
		if err != nil {
			return err
		}
		child, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("layout %s: decoding index %s: %w", dir, d.Digest, err)
		}
		for _, c := range child.Manifests {
			if err := s.putTree(repo, dir, c, done); err != nil {
				return err
			}
		}
	}
	done[d.Digest.String()] = true
	return s.putManifest(repo, dir, d, d.Digest.String())
}

func (s *seeder) readBlob(dir string, h v1.Hash) ([]byte, error) {
	p := path.Join(dir, "blobs", h.Algorithm, h.Hex)
	b, err := fs.ReadFile(s.fsys, p)
	if err != nil {
		return nil, fmt.Errorf("layout %s: reading manifest %s: %w", dir, h, err)
	}
	return b, nil
}

func (s *seeder) putManifest(repo, dir string, d v1.Descriptor, ref string) error {
	raw, err := s.readBlob(dir, d.Digest)
	if err != nil {
		return err
	}
	mt := d.MediaType
	if mt == "" {
		var probe struct {
			MediaType types.MediaType `json:"mediaType"`
		}
		if err := json.Unmarshal(raw, &probe); err == nil {
			mt = probe.MediaType
		}
	}
	if err := s.putRaw(repo, ref, raw, string(mt), dir); err != nil {
		return err
	}
	if s.sign != nil {
		s.sign.saw(repo, ref, d.Digest.String())
	}
	return nil
}

// putRaw puts a manifest's bytes into the registry under repo:ref (a tag or its digest).
func (s *seeder) putRaw(repo, ref string, raw []byte, mediaType, from string) error {
	req := httptest.NewRequest(http.MethodPut, "/v2/"+repo+"/manifests/"+ref, bytes.NewReader(raw))
	req.Header.Set("Content-Type", mediaType)
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		return fmt.Errorf("seeding %s:%s from %s: registry answered %d: %s", repo, ref, from, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	s.count++
	return nil
}

var errNoLayouts = errors.New("no OCI layouts under images/ (expected images/<host>/<repo>/oci-layout)")

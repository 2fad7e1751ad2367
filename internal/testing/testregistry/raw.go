package testregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
)

// RawFilePrefix is the URL path prefix under which the snapshot-controller operator's files
// are served one by one, mirroring
// https://raw.githubusercontent.com/openshift/cluster-csi-snapshot-controller-operator/<commit>/<path>.
// They come from the same archives as SnapshotArchivePrefix.
const RawFilePrefix = "/raw.githubusercontent.com/openshift/cluster-csi-snapshot-controller-operator/"

// SnapshotFilesURL is the per-file --snapshot-assets URL template ({commit} and {path}).
func (r *Registry) SnapshotFilesURL() string {
	return r.URL() + RawFilePrefix + "{commit}/{path}"
}

// AddSnapshotArchive serves tgz (a GitHub-archive-shaped tarball) for commit, as an archive
// and file by file, in place of the fixture tree's — benchmarks use it for real-size
// archives. The archive is indexed now, so no request pays for it.
func (r *Registry) AddSnapshotArchive(commit string, tgz []byte) {
	idx := &rawIndex{}
	idx.once.Do(func() { idx.files, idx.err = archiveFiles(tgz) })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[commit] = tgz
	r.rawFiles[commit] = idx
}

// rawIndex is one archive's files by path, built once however many requests ask at once.
type rawIndex struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// snapshotArchive returns the archive of commit: added at run time, else from the fixtures.
func (r *Registry) snapshotArchive(commit string) ([]byte, error) {
	if commit == "" || strings.ContainsAny(commit, "/.") {
		return nil, fs.ErrNotExist
	}
	r.mu.Lock()
	data, ok := r.archives[commit]
	r.mu.Unlock()
	if ok {
		return data, nil
	}
	return fs.ReadFile(r.fixtures, "snapshot-assets/"+commit+".tar.gz")
}

// rawFile returns one file of commit's archive; the archive is indexed on first use.
func (r *Registry) rawFile(commit, name string) ([]byte, error) {
	r.mu.Lock()
	idx, ok := r.rawFiles[commit]
	if !ok {
		idx = &rawIndex{}
		r.rawFiles[commit] = idx
	}
	r.mu.Unlock()
	idx.once.Do(func() {
		tgz, err := r.snapshotArchive(commit)
		if err != nil {
			idx.err = err
			return
		}
		if idx.files, err = archiveFiles(tgz); err != nil {
			idx.err = fmt.Errorf("snapshot archive %s: %w", commit, err)
		}
	})
	if idx.err != nil {
		return nil, idx.err
	}
	data, ok := idx.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return data, nil
}

// archiveFiles maps the regular files of a gzipped tarball to their contents, with the
// single top directory (<repo>-<commit>/) stripped as raw URLs do.
func archiveFiles(tgz []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, rel, ok := strings.Cut(path.Clean(h.Name), "/")
		if !ok {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[rel] = data
	}
}

// serveRawFile answers GET /raw.githubusercontent.com/…/<commit>/<path>.
func (r *Registry) serveRawFile(w http.ResponseWriter, req *http.Request) {
	commit, name, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, RawFilePrefix), "/")
	if !ok || name == "" || path.Clean(name) != name || strings.HasPrefix(name, "../") {
		http.NotFound(w, req)
		return
	}
	data, err := r.rawFile(commit, name)
	if errors.Is(err, fs.ErrNotExist) {
		http.NotFound(w, req)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	if req.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(data)
}

// Package snapshot reads the cluster-csi-snapshot-controller-operator's operand assets, at
// the commit an OpenShift payload records, and translates them into the objects of
// MicroShift's assets/components/csi-snapshot-controller/ files: which upstream file becomes
// which MicroShift file (one table, sources, which also says what a run fetches) and the
// template values kustomize cannot fill. What MicroShift changes in those objects per
// version (namespace, images, arguments, user, dropped fields) is the era's kustomize
// overlay, overlays/csi-snapshot-controller/<era>/, which rebase/render builds.
package snapshot

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/gitcommit"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// DefaultSource is the --snapshot-assets default: GitHub's raw file URLs of the operator at a
// commit, one request per file the era's translation reads (about 15-20 KB in all, where the
// repository archive is over 11 MB with vendor/).
const DefaultSource = "https://raw.githubusercontent.com/openshift/cluster-csi-snapshot-controller-operator/{commit}/{path}"

// ArchiveSource is GitHub's tarball of the operator at a commit, one top directory
// cluster-csi-snapshot-controller-operator-<commit>/ (the pre-per-file default, still accepted).
const ArchiveSource = "https://github.com/openshift/cluster-csi-snapshot-controller-operator/archive/{commit}.tar.gz"

// CommitPlaceholder is replaced by the commit in a URL source.
const CommitPlaceholder = "{commit}"

// PathPlaceholder marks a per-file URL source; it is replaced by a repository-relative path.
const PathPlaceholder = "{path}"

// Limits on what is read from a tarball. The GitHub tarball holds the whole repository
// (vendor/ included), so the stream cap is generous while kept files are small YAML.
const (
	MaxStreamBytes = 1 << 30 // uncompressed bytes read from a tarball
	MaxEntries     = 200000
	MaxFileBytes   = 2 << 20 // one kept file
	MaxTotalBytes  = 16 << 20
)

// FetchFunc opens a URL; the image-source package provides one with auth, mirrors and retries.
type FetchFunc func(ctx context.Context, url string) (io.ReadCloser, error)

// Assets are the operator files the translation reads, keyed by repository-relative path
// (assets/… and manifests/05_operand_rbac.yaml).
type Assets struct {
	// Commit is the operator commit the assets come from.
	Commit string
	// Source describes where they were read from (URL, directory or tarball path).
	Source string
	// Files maps repository-relative paths to contents.
	Files map[string][]byte
}

// Paths lists the file paths in sorted order.
func (a *Assets) Paths() []string {
	return append([]string{}, slices.Sorted(maps.Keys(a.Files))...)
}

// Digest hashes the snapshot files that were read (path and content, sorted), so the
// lock pins their content whatever archive or directory they came from.
func (a *Assets) Digest() string {
	h := sha256.New()
	for _, p := range a.Paths() {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(a.Files[p]))
		h.Write(a.Files[p])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// wanted reports whether a repository-relative path is one the translation may read.
func wanted(p string) bool {
	return strings.HasPrefix(p, "assets/") || p == "manifests/05_operand_rbac.yaml"
}

// required are the files every operator version has; their absence means a wrong source.
var required = []string{"assets/csi_controller_deployment.yaml", "manifests/05_operand_rbac.yaml"}

// Load reads every assets/ file (and manifests/05_operand_rbac.yaml) of the operator at commit
// from an archive, directory or tarball source; see LoadWith. A per-file source needs the
// paths to read: use LoadWith with Paths (Needed of the era).
func Load(ctx context.Context, source, commit string, fetch FetchFunc) (*Assets, error) {
	return LoadWith(ctx, LoadOptions{Source: source, Commit: commit, Fetch: fetch})
}

// LoadOptions say what LoadWith reads and how.
type LoadOptions struct {
	// Source is a per-file URL template with {commit} and {path} (DefaultSource, the default),
	// an archive URL template with {commit} (or any http(s) URL), a local directory (a
	// checkout of the repository) or a local tarball (.tar or .tar.gz, with or without a
	// single top directory).
	Source string
	// Commit is the operator commit (from the payload).
	Commit string
	// Paths are the repository-relative files to keep (Needed of the era). A per-file source
	// fetches exactly these; the other sources keep only these and fail when one is missing.
	// Empty keeps every assets/ file (not allowed with a per-file source).
	Paths []string
	// Fetch opens URLs (auth, mirrors, cache and retries come from rebase/source).
	Fetch FetchFunc
	// Concurrency bounds the parallel requests of a per-file source (default 8).
	Concurrency int
}

// LoadWith reads the operator's assets as o says. Every error names the source, the commit
// and, for a missing or unreadable file, its path.
func LoadWith(ctx context.Context, o LoadOptions) (*Assets, error) {
	source, commit := o.Source, o.Commit
	if source == "" {
		source = DefaultSource
	}
	if !gitcommit.Valid(commit) {
		return nil, fmt.Errorf("snapshot assets: commit %q: expected a 7-64 character hex commit id", commit)
	}
	if strings.Contains(source, PathPlaceholder) {
		return loadFiles(ctx, source, o)
	}
	a, err := loadWhole(ctx, source, commit, o.Fetch)
	if err != nil {
		return nil, err
	}
	if len(o.Paths) > 0 {
		if err := a.keep(o.Paths); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// IsLocal reports whether source names a local directory or tarball rather than a URL or a
// URL template (the sources LoadWith tells apart the same way).
func IsLocal(source string) bool {
	return source != "" && !strings.Contains(source, CommitPlaceholder) && !strings.Contains(source, PathPlaceholder) &&
		!strings.HasPrefix(source, "http://") && !strings.HasPrefix(source, "https://")
}

// CheckLocal checks, before anything is fetched, that a local source is what LoadWith can
// read: a directory, or a regular file that is not empty (a tarball); links are followed (a
// person names the path). The value may be a URL given without a scheme, so it is redacted.
func CheckLocal(source string) error {
	fi, err := os.Stat(source)
	if err != nil {
		if pe := (*os.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: expected a URL with %s, a directory or a tarball: %w", redact.URL(source), CommitPlaceholder, err)
	}
	switch {
	case fi.IsDir():
		return nil
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %s, expected a directory or a tarball", redact.URL(source), safefile.Kind(fi.Mode()))
	case fi.Size() == 0:
		return fmt.Errorf("%s: an empty file, expected a directory or a tarball", redact.URL(source))
	}
	return nil
}

// loadWhole reads the wanted files of a whole-tree source: archive URL, directory or tarball.
func loadWhole(ctx context.Context, source, commit string, fetch FetchFunc) (*Assets, error) {
	a := &Assets{Commit: commit, Files: map[string][]byte{}}
	var err error
	switch {
	case strings.Contains(source, CommitPlaceholder) || strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://"):
		url := strings.ReplaceAll(source, CommitPlaceholder, commit)
		a.Source = redact.URL(url)
		if fetch == nil {
			return nil, fmt.Errorf("snapshot assets %s: no fetch function for a URL source", a.Source)
		}
		var rc io.ReadCloser
		rc, err = fetch(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("snapshot assets: fetching %s: %w", a.Source, err)
		}
		defer rc.Close()
		err = readTar(rc, a.Files)
	default:
		a.Source = source
		var fi os.FileInfo
		fi, err = os.Stat(source)
		if err != nil {
			// Not a path after all: it may be a URL given without a scheme, credentials and all,
			// so the value is redacted and the *PathError (which repeats it) not quoted.
			if pe := (*os.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("snapshot assets: source %s: expected a URL with %s, a directory or a tarball: %w", redact.URL(source), CommitPlaceholder, err)
		}
		if fi.IsDir() {
			err = readDir(safefile.FS(source), a.Files)
		} else if err = checkArchiveCommit(source, commit); err == nil {
			var f *os.File
			f, _, err = openArchive(source)
			if err == nil {
				defer f.Close()
				err = readTar(f, a.Files)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot assets %s (commit %s): %w", a.Source, commit, err)
	}
	var missing []string
	for _, r := range required {
		if _, ok := a.Files[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("snapshot assets %s (commit %s): missing %s (not a cluster-csi-snapshot-controller-operator tree?)",
			a.Source, commit, strings.Join(missing, ", "))
	}
	return a, nil
}

// checkArchiveCommit refuses a local tarball that says it holds another commit (its pax
// global header or <repo>-<commit> top directory): another release's archive must not be
// read as this payload's. An archive that names no commit is taken as the user's choice.
func checkArchiveCommit(path, commit string) error {
	f, _, err := openArchive(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := gitcommit.Archive(f, MaxStreamBytes)
	if err != nil {
		return err
	}
	if got != "" && !gitcommit.Same(got, commit) {
		return fmt.Errorf("the archive holds commit %s, but the payload names %s", got, commit)
	}
	return nil
}

// openArchive opens the tarball a person named: a regular file (a FIFO or a device is
// refused, never read) of at most MaxStreamBytes, reached through links if need be.
func openArchive(path string) (*os.File, fs.FileInfo, error) {
	return safefile.Open(path, safefile.Options{Follow: true, Max: MaxStreamBytes})
}

// readDir reads the wanted files of a repository checkout. Symlinks and other non-regular
// files are ignored, as in tarballs.
func readDir(fsys fs.FS, out map[string][]byte) error {
	var total int64
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "." || p == "assets" || p == "manifests" || strings.HasPrefix(p, "assets/") {
				return nil
			}
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || !wanted(p) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxFileBytes {
			return fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", p, info.Size(), MaxFileBytes)
		}
		if total += info.Size(); total > MaxTotalBytes {
			return fmt.Errorf("assets exceed %d bytes", MaxTotalBytes)
		}
		data, err := safefile.ReadFS(fsys, p, MaxFileBytes)
		if err != nil {
			return err
		}
		out[p] = data
		return nil
	})
}

// limitedReader fails, rather than truncating, once more than n bytes are read.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("tarball exceeds %d uncompressed bytes", int64(MaxStreamBytes))
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// readTar reads the wanted regular files of a (possibly gzipped) tarball. Entry names are
// normalised (leading "./" and "/" dropped); a name with a ".." element is rejected; links,
// devices and directories are skipped. When every entry sits under one top directory (GitHub's
// <repo>-<commit>/), that directory is stripped.
func readTar(r io.Reader, out map[string][]byte) error {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("opening gzip stream: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	tr := tar.NewReader(&limitedReader{r: src, n: MaxStreamBytes})
	files := map[string][]byte{}
	tops := map[string]bool{}
	var total int64
	for entries := 0; ; entries++ {
		if entries > MaxEntries {
			return fmt.Errorf("tarball has more than %d entries", MaxEntries)
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading tarball: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // GitHub puts the commit in a pax global header
		}
		name := strings.TrimLeft(strings.TrimPrefix(filepath.ToSlash(h.Name), "./"), "/")
		for _, el := range strings.Split(name, "/") {
			if el == ".." {
				return fmt.Errorf("tar entry %q: path escapes the archive", h.Name)
			}
		}
		name = path.Clean(name)
		if name == "." || name == "" {
			continue
		}
		tops[strings.SplitN(name, "/", 2)[0]] = true
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA { //nolint:staticcheck // TypeRegA still appears in old archives
			continue
		}
		if !wanted(name) && !wanted(stripTop(name)) {
			continue
		}
		if h.Size > MaxFileBytes {
			return fmt.Errorf("tar entry %s: %d bytes exceeds the %d-byte limit", name, h.Size, MaxFileBytes)
		}
		if total += h.Size; total > MaxTotalBytes {
			return fmt.Errorf("tarball assets exceed %d bytes", MaxTotalBytes)
		}
		// safefile: a tar entry, bounded by MaxFileBytes (its header was checked above).
		data, err := io.ReadAll(io.LimitReader(tr, MaxFileBytes+1))
		if err != nil {
			return fmt.Errorf("tar entry %s: %w", name, err)
		}
		files[name] = data
	}
	strip := false
	if len(tops) == 1 {
		for top := range tops {
			strip = top != "assets" && top != "manifests"
		}
	}
	for name, data := range files {
		if strip {
			name = stripTop(name)
		}
		if wanted(name) {
			out[name] = data
		}
	}
	return nil
}

func stripTop(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

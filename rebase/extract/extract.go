// Package extract unpacks container image layer tarballs into a directory without trusting
// them: only regular files under wanted path prefixes are written, hostile names (`..`,
// absolute paths) fail, links and device nodes that would land in (or above) a wanted prefix
// fail, and per-file and per-image byte caps stop decompression bombs before they are read.
//
// Layers are applied either bottom-up with OCI/Docker whiteouts (Layers; what a container
// runtime does, used for the small bundle image) or top-down stopping early (TopDown; used
// for the release payload, whose release-manifests/ sit in the top layer of a large image).
package extract

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
)

// Default caps; both can be raised through Options.
const (
	DefaultMaxFileSize  int64 = 64 << 20
	DefaultMaxImageSize int64 = 512 << 20
)

const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
	// maxPathLen and maxPathDepth bound what one entry may create: PATH_MAX, and far more
	// nesting than any manifest directory has. os.Root would happily build a 100,000-deep
	// tree from a 200 KB entry, which os.RemoveAll then cannot delete.
	maxPathLen   = 4096
	maxPathDepth = 64
	// tarBlock is what every entry costs in the stream besides its body; counting it stops
	// archives made of millions of empty entries.
	tarBlock = 512
)

// ErrTooLarge is wrapped by errors caused by the per-file or per-image cap.
var ErrTooLarge = errors.New("size cap exceeded")

// ErrUnsafe is wrapped by errors caused by hostile entries (path traversal, absolute names,
// links or devices where files are wanted).
var ErrUnsafe = errors.New("unsafe tar entry")

// Options controls what is extracted and how much may be read.
type Options struct {
	// Prefixes are the slash-separated directories to extract, e.g. "manifests/". Entries
	// elsewhere are skipped (but still count against MaxImageSize). Empty means everything.
	Prefixes []string
	// MaxFileSize caps one extracted file (default DefaultMaxFileSize).
	MaxFileSize int64
	// MaxImageSize caps the uncompressed tar bytes walked across all layers of one call,
	// including skipped entries (default DefaultMaxImageSize).
	MaxImageSize int64
	// Name labels errors, e.g. "registry.redhat.io/…@sha256:… layer 2".
	Name string
	// OnFile, when set, is called with each extracted file's path (relative to the
	// destination, as in Result.Files) once the file is written in full, from the extracting
	// goroutine. TopDown never replaces a file it wrote; Layers may (an upper layer's copy or
	// whiteout).
	OnFile func(path string)
}

// Result describes what an extraction wrote.
type Result struct {
	// Files are the extracted paths relative to the destination, sorted.
	Files []string
	// Bytes is the number of uncompressed tar bytes walked (bodies plus headers).
	Bytes int64
}

// Layer opens one layer's uncompressed tar stream.
type Layer struct {
	// Name labels errors (for example the layer digest).
	Name string
	// Open returns the uncompressed tar stream.
	Open func() (io.ReadCloser, error)
}

// Tar extracts a single tar stream into dst (created if missing). Whiteout entries are
// skipped, since there is no lower layer for them to hide.
func Tar(r io.Reader, dst string, opts Options) (*Result, error) {
	x, err := newExtractor(dst, opts)
	if err != nil {
		return nil, err
	}
	defer x.root.Close()
	if err := x.layer(r, opts.Name, modeSingle); err != nil {
		return nil, err
	}
	return x.result(), nil
}

// Layers applies layers bottom to top (index 0 is the base) into dst, honouring whiteouts
// (".wh.NAME" removes NAME from lower layers, ".wh..wh..opq" empties its directory of
// lower-layer content), so dst ends up like the container's filesystem under the prefixes.
func Layers(layers []Layer, dst string, opts Options) (*Result, error) {
	x, err := newExtractor(dst, opts)
	if err != nil {
		return nil, err
	}
	defer x.root.Close()
	for i, l := range layers {
		if err := x.openAndApply(l, i, modeBottomUp); err != nil {
			return nil, err
		}
	}
	return x.result(), nil
}

// TopDown walks layers from the top (last index) down, extracting each path from the
// highest layer that has it and skipping paths hidden by a whiteout above. After each layer
// it calls done with the files extracted so far; when done returns true the remaining
// (lower, usually large) layers are never opened. It returns how many layers were opened.
func TopDown(layers []Layer, dst string, opts Options, done func(files []string) bool) (*Result, int, error) {
	x, err := newExtractor(dst, opts)
	if err != nil {
		return nil, 0, err
	}
	defer x.root.Close()
	opened := 0
	for i := len(layers) - 1; i >= 0; i-- {
		opened++
		if err := x.openAndApply(layers[i], i, modeTopDown); err != nil {
			return nil, opened, err
		}
		if done != nil && done(x.result().Files) {
			break
		}
	}
	return x.result(), opened, nil
}

type mode int

const (
	modeSingle mode = iota
	modeBottomUp
	modeTopDown
)

type extractor struct {
	root     *os.Root
	dst      string
	opts     Options
	used     int64
	raw      int64 // uncompressed bytes actually read, PAX/GNU meta headers included
	files    map[string]bool
	hidden   map[string]bool // top-down: paths whited out by an upper layer
	opaque   map[string]bool // top-down: directories made opaque by an upper layer
	thisLyr  map[string]bool
	prefixes []string
}

func newExtractor(dst string, opts Options) (*extractor, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxImageSize <= 0 {
		opts.MaxImageSize = DefaultMaxImageSize
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("creating extraction directory %s: %w", dst, err)
	}
	// os.Root confines every write to dst even if a check below were ever wrong.
	root, err := os.OpenRoot(dst)
	if err != nil {
		return nil, fmt.Errorf("opening extraction directory %s: %w", dst, err)
	}
	x := &extractor{root: root, dst: dst, opts: opts, files: map[string]bool{}, hidden: map[string]bool{}, opaque: map[string]bool{}}
	for _, p := range opts.Prefixes {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p != "" {
			x.prefixes = append(x.prefixes, p)
		}
	}
	return x, nil
}

func (x *extractor) result() *Result {
	// Never nil, so an empty result still reads as a list.
	files := append([]string{}, slices.Sorted(maps.Keys(x.files))...)
	return &Result{Files: files, Bytes: x.used}
}

func (x *extractor) openAndApply(l Layer, i int, m mode) error {
	name := l.Name
	if name == "" {
		name = fmt.Sprintf("layer %d", i)
	}
	if x.opts.Name != "" {
		name = x.opts.Name + " " + name
	}
	rc, err := l.Open()
	if err != nil {
		return fmt.Errorf("opening %s: %w", name, err)
	}
	defer rc.Close()
	return x.layer(rc, name, m)
}

// wanted reports whether a cleaned path lies under one of the prefixes.
func (x *extractor) wanted(p string) bool {
	if len(x.prefixes) == 0 {
		return true
	}
	for _, pre := range x.prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// matters reports whether a non-regular entry at p could affect wanted content: it is
// inside a prefix or is one of a prefix's ancestors (a symlinked "manifests" directory).
func (x *extractor) matters(p string) bool {
	// The root is every prefix's ancestor (a root opaque whiteout hides all lower layers).
	if p == "" || x.wanted(p) {
		return true
	}
	for _, pre := range x.prefixes {
		if strings.HasPrefix(pre, p+"/") {
			return true
		}
	}
	return false
}

// cleanName normalises a tar entry name and rejects traversal and absolute names.
func cleanName(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: absolute path %q", ErrUnsafe, name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: path traversal in %q", ErrUnsafe, name)
		}
	}
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%w: invalid character in %q", ErrUnsafe, name)
	}
	p := strings.Trim(path.Clean("/"+name), "/")
	return p, nil
}

// whiteouts are the deletions a layer records: single paths and opaque directories.
type whiteouts struct {
	paths, opaques []string
}

// layer extracts the wanted regular files of one layer tar and applies (bottom-up) or
// records (top-down) its whiteouts.
func (x *extractor) layer(r io.Reader, name string, m mode) error {
	tr := tar.NewReader(&budgetReader{r: r, x: x})
	x.thisLyr = map[string]bool{}
	var wh whiteouts
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading tar %s: %w", name, err)
		}
		if err := x.entry(tr, hdr, name, m, &wh); err != nil {
			return err
		}
	}
	return x.whiteouts(name, m, wh)
}

// entry handles one tar entry: budget, name checks, whiteouts, and writing a wanted file.
func (x *extractor) entry(tr *tar.Reader, hdr *tar.Header, name string, m mode, wh *whiteouts) error {
	size := hdr.Size
	if size < 0 {
		size = 0
	}
	x.used += tarBlock + size
	if x.used > x.opts.MaxImageSize {
		return fmt.Errorf("%s: entry %q: more than %d uncompressed bytes in this image (raise the per-image cap to allow): %w",
			name, hdr.Name, x.opts.MaxImageSize, ErrTooLarge)
	}
	p, err := cleanName(hdr.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if p == "" || x.whiteout(p, wh) {
		return nil
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return nil
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives still use '\x00'
	default:
		if x.matters(p) {
			return fmt.Errorf("%s: %w: %s entry %q (link target %q) where regular files are wanted",
				name, ErrUnsafe, typeName(hdr.Typeflag), hdr.Name, hdr.Linkname)
		}
		return nil
	}
	if !x.wanted(p) {
		return nil
	}
	if err := x.checkWanted(p, hdr, name); err != nil {
		return err
	}
	if m == modeTopDown && x.shadowed(p) {
		return nil
	}
	if err := x.write(p, tr, hdr.Size); err != nil {
		return fmt.Errorf("%s: writing %q: %w", name, p, err)
	}
	x.thisLyr[p] = true
	x.files[p] = true
	if x.opts.OnFile != nil {
		x.opts.OnFile(p)
	}
	return nil
}

// whiteout reports whether p is a whiteout entry, and collects it if it hides something
// that matters.
func (x *extractor) whiteout(p string, wh *whiteouts) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if !strings.HasPrefix(base, whiteoutPrefix) {
		return false
	}
	if base == whiteoutOpaque {
		if x.matters(dir) {
			wh.opaques = append(wh.opaques, dir)
		}
	} else if target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)); x.matters(target) {
		wh.paths = append(wh.paths, target)
	}
	return true
}

// checkWanted refuses a wanted file whose name or size cannot be written safely.
func (x *extractor) checkWanted(p string, hdr *tar.Header, name string) error {
	// A backslash is an ordinary character on Linux (systemd's escaped unit names in a
	// base layer), but a separator elsewhere: refused only in what gets written.
	if strings.Contains(p, "\\") {
		return fmt.Errorf("%s: %w: invalid character in %q", name, ErrUnsafe, hdr.Name)
	}
	if len(p) > maxPathLen || strings.Count(p, "/") >= maxPathDepth {
		return fmt.Errorf("%s: %w: entry %.120q… is %d bytes and %d directories deep (limits %d and %d)",
			name, ErrUnsafe, p, len(p), strings.Count(p, "/"), maxPathLen, maxPathDepth)
	}
	if hdr.Size > x.opts.MaxFileSize {
		return fmt.Errorf("%s: file %q is %d bytes, over the per-file cap of %d: %w", name, p, hdr.Size, x.opts.MaxFileSize, ErrTooLarge)
	}
	return nil
}

// whiteouts applies a layer's whiteouts to what lower layers wrote (bottom-up), or records
// them to hide what lower layers will offer (top-down).
func (x *extractor) whiteouts(name string, m mode, wh whiteouts) error {
	switch m {
	case modeBottomUp:
		for _, w := range wh.paths {
			if err := x.remove(w); err != nil {
				return fmt.Errorf("%s: applying whiteout for %q: %w", name, w, err)
			}
		}
		for _, d := range wh.opaques {
			if err := x.emptyDir(d); err != nil {
				return fmt.Errorf("%s: applying opaque whiteout for %q: %w", name, d, err)
			}
		}
	case modeTopDown:
		for _, w := range wh.paths {
			x.hidden[w] = true
		}
		for _, d := range wh.opaques {
			x.opaque[d] = true
		}
	}
	return nil
}

// shadowed reports whether p, met in a lower layer during a top-down walk, is already
// provided or hidden by an upper one.
func (x *extractor) shadowed(p string) bool {
	if x.files[p] && !x.thisLyr[p] {
		return true
	}
	for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
		if x.hidden[q] {
			return true
		}
		if q != p && x.opaque[q] {
			return true
		}
	}
	return x.opaque[""]
}

// budgetReader charges every byte archive/tar reads to the per-image cap. Entry sizes are
// checked before their bodies are read, but PAX and GNU long-name headers are consumed
// inside tar.Reader.Next (up to 1 MiB each, any number in a row) and never surface as
// entries, so without this a flood of them would decompress without bound.
type budgetReader struct {
	r io.Reader
	x *extractor
}

func (b *budgetReader) Read(p []byte) (int, error) {
	left := b.x.opts.MaxImageSize - b.x.raw
	if left <= 0 {
		return 0, fmt.Errorf("more than %d uncompressed bytes in this image (raise the per-image cap to allow): %w", b.x.opts.MaxImageSize, ErrTooLarge)
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.r.Read(p)
	b.x.raw += int64(n)
	return n, err
}

func (x *extractor) write(p string, r io.Reader, size int64) error {
	if d := path.Dir(p); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	f, err := x.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, x.opts.MaxFileSize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n > x.opts.MaxFileSize {
		return fmt.Errorf("over the per-file cap of %d: %w", x.opts.MaxFileSize, ErrTooLarge)
	}
	if n != size {
		return fmt.Errorf("short body: %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	return nil
}

// remove deletes the lower-layer content at or under p (bottom-up whiteout). Files this
// layer wrote survive: a whiteout only hides what is below it.
func (x *extractor) remove(p string) error {
	var victims []string
	keep := false
	for f := range x.files {
		if f == p || strings.HasPrefix(f, p+"/") {
			if x.thisLyr[f] {
				keep = true
			} else {
				victims = append(victims, f)
			}
		}
	}
	sort.Strings(victims)
	for _, f := range victims {
		if err := x.root.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		delete(x.files, f)
	}
	if !keep {
		if err := x.root.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// emptyDir removes lower-layer content of d while keeping what this layer wrote.
func (x *extractor) emptyDir(d string) error {
	var victims []string
	for f := range x.files {
		if (d == "" || strings.HasPrefix(f, d+"/")) && !x.thisLyr[f] {
			victims = append(victims, f)
		}
	}
	sort.Strings(victims)
	for _, f := range victims {
		if err := x.root.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		delete(x.files, f)
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hardlink"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "fifo"
	default:
		return fmt.Sprintf("type %q", t)
	}
}

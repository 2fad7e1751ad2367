package extract

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry describes one tar member for tests.
type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func reg(name, body string) entry { return entry{name: name, typ: tar.TypeReg, body: body} }

func mkTar(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.linkname}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readTree returns path -> content for every regular file under dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(rel)] = string(b)
		} else if !d.IsDir() {
			t.Errorf("non-regular file %s in output", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTar(t *testing.T) {
	wanted := []string{"manifests/", "metadata"}
	tests := []struct {
		name    string
		entries []entry
		opts    Options
		want    map[string]string
		wantErr error
		errHas  string
	}{
		{
			name: "regular files under prefixes only, ./ and dirs normalised",
			entries: []entry{
				{name: "manifests/", typ: tar.TypeDir},
				reg("./manifests/csv.yaml", "csv"),
				reg("metadata/annotations.yaml", "ann"),
				reg("tests/scorecard/config.yaml", "sc"),
				reg("manifestsX/other", "no"),
			},
			want: map[string]string{"manifests/csv.yaml": "csv", "metadata/annotations.yaml": "ann"},
		},
		{
			name:    "later duplicate wins",
			entries: []entry{reg("manifests/a", "1"), reg("manifests/a", "2")},
			want:    map[string]string{"manifests/a": "2"},
		},
		{
			name:    "dot-dot traversal",
			entries: []entry{reg("manifests/../../etc/passwd", "x")},
			wantErr: ErrUnsafe, errHas: "traversal",
		},
		{
			name:    "dot-dot outside prefixes still rejected",
			entries: []entry{reg("../x", "x")},
			wantErr: ErrUnsafe,
		},
		{
			name:    "absolute path",
			entries: []entry{reg("/manifests/a", "x")},
			wantErr: ErrUnsafe, errHas: "absolute",
		},
		{
			name:    "symlink in prefix",
			entries: []entry{{name: "manifests/evil", typ: tar.TypeSymlink, linkname: "/etc/passwd"}},
			wantErr: ErrUnsafe, errHas: "symlink",
		},
		{
			name:    "symlinked prefix directory",
			entries: []entry{{name: "manifests", typ: tar.TypeSymlink, linkname: "/tmp"}, reg("manifests/a", "x")},
			wantErr: ErrUnsafe, errHas: "symlink",
		},
		{
			name:    "hardlink in prefix",
			entries: []entry{reg("etc/shadow", "s"), {name: "manifests/h", typ: tar.TypeLink, linkname: "etc/shadow"}},
			wantErr: ErrUnsafe, errHas: "hardlink",
		},
		{
			name:    "char device in prefix",
			entries: []entry{{name: "manifests/null", typ: tar.TypeChar}},
			wantErr: ErrUnsafe, errHas: "character device",
		},
		{
			name:    "block device in prefix",
			entries: []entry{{name: "metadata/sda", typ: tar.TypeBlock}},
			wantErr: ErrUnsafe, errHas: "block device",
		},
		{
			name:    "fifo in prefix",
			entries: []entry{{name: "metadata/f", typ: tar.TypeFifo}},
			wantErr: ErrUnsafe, errHas: "fifo",
		},
		{
			name: "links and devices outside prefixes are ignored",
			entries: []entry{
				{name: "usr/bin/sh", typ: tar.TypeSymlink, linkname: "/bin/busybox"},
				{name: "dev/null", typ: tar.TypeChar},
				{name: "lib/x", typ: tar.TypeLink, linkname: "usr/bin/sh"},
				reg("manifests/a", "ok"),
			},
			want: map[string]string{"manifests/a": "ok"},
		},
		{
			name:    "per-file cap",
			entries: []entry{reg("manifests/big", strings.Repeat("x", 100))},
			opts:    Options{MaxFileSize: 99},
			wantErr: ErrTooLarge, errHas: "per-file cap",
		},
		{
			name:    "per-image cap counts skipped entries",
			entries: []entry{reg("usr/blob", strings.Repeat("x", 4000)), reg("manifests/a", "x")},
			opts:    Options{MaxImageSize: 4096},
			wantErr: ErrTooLarge, errHas: "per-image cap",
		},
		{
			name:    "whiteouts are ignored in a single tar",
			entries: []entry{reg("manifests/.wh.a", ""), reg("manifests/b", "b")},
			want:    map[string]string{"manifests/b": "b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			opts := tc.opts
			opts.Prefixes = wanted
			res, err := Tar(bytes.NewReader(mkTar(t, tc.entries...)), dst, opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %q does not mention %q", err, tc.errHas)
				}
				if _, serr := os.Lstat("/tmp/etc/passwd"); serr == nil && tc.name == "dot-dot traversal" {
					t.Fatal("traversal escaped")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := readTree(t, dst)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("tree (-want +got):\n%s", diff)
			}
			var files []string
			for f := range tc.want {
				files = append(files, f)
			}
			if len(res.Files) != len(files) {
				t.Fatalf("Result.Files = %v, want %d files", res.Files, len(files))
			}
		})
	}
}

func TestTarGzipBomb(t *testing.T) {
	// 600 MiB of zeros (over the 512 MiB default cap) compresses to under 1 MiB; the header
	// alone must trip the cap, so the test also bounds how much is decompressed.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	const size = 600 << 20
	if err := tw.WriteHeader(&tar.Header{Name: "usr/zero", Typeflag: tar.TypeReg, Size: size, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < size/len(zero); i++ {
		if _, err := tw.Write(zero); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	if buf.Len() > 4<<20 {
		t.Fatalf("bomb is %d bytes compressed", buf.Len())
	}
	zr, err := gzip.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReader{r: zr}
	_, err = Tar(cr, t.TempDir(), Options{Prefixes: []string{"manifests"}})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
	if cr.n > 1<<20 {
		t.Fatalf("read %d decompressed bytes before failing, want fail-fast", cr.n)
	}
	// Extracting everything still fails on the header, before any body is decompressed.
	zr, _ = gzip.NewReader(bytes.NewReader(buf.Bytes()))
	_, err = Tar(zr, t.TempDir(), Options{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "per-image") {
		t.Fatalf("error = %v, want per-image ErrTooLarge", err)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func layer(t testing.TB, name string, entries ...entry) Layer {
	b := mkTar(t, entries...)
	return Layer{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func TestLayersWhiteouts(t *testing.T) {
	layers := []Layer{
		layer(t, "base",
			reg("manifests/a.yaml", "a1"),
			reg("manifests/b.yaml", "b1"),
			reg("manifests/sub/c.yaml", "c1"),
			reg("metadata/annotations.yaml", "m1"),
			reg("metadata/old/x", "x")),
		layer(t, "middle",
			reg("manifests/.wh.b.yaml", ""),
			reg("manifests/a.yaml", "a2"),
			reg("metadata/.wh.old", ""),
			reg("manifests/sub/.wh..wh..opq", ""),
			reg("manifests/sub/d.yaml", "d2")),
		layer(t, "top",
			// A whiteout hides only lower layers: this layer's own b.yaml survives.
			reg("manifests/b.yaml", "b3"),
			reg("manifests/.wh.b.yaml", ""),
			reg("manifests/.wh.a.yaml", "")),
	}
	dst := t.TempDir()
	res, err := Layers(layers, dst, Options{Prefixes: []string{"manifests", "metadata"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"manifests/b.yaml":          "b3",
		"manifests/sub/d.yaml":      "d2",
		"metadata/annotations.yaml": "m1",
	}
	if diff := cmp.Diff(want, readTree(t, dst)); diff != "" {
		t.Fatalf("tree (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"manifests/b.yaml", "manifests/sub/d.yaml", "metadata/annotations.yaml"}, res.Files); diff != "" {
		t.Fatalf("Files (-want +got):\n%s", diff)
	}
}

func TestLayersImageCapAcrossLayers(t *testing.T) {
	l := layer(t, "l", reg("manifests/a", strings.Repeat("x", 3000)))
	_, err := Layers([]Layer{l, l}, t.TempDir(), Options{MaxImageSize: 5000})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
}

func TestTopDown(t *testing.T) {
	opened := map[string]bool{}
	track := func(l Layer) Layer {
		open := l.Open
		l.Open = func() (io.ReadCloser, error) { opened[l.Name] = true; return open() }
		return l
	}
	base := track(layer(t, "base", reg("release-manifests/old", "old"), reg("release-manifests/hidden", "h"), reg("usr/bin/cvo", "bin")))
	mid := track(layer(t, "mid", reg("release-manifests/image-references", "refs-mid"), reg("release-manifests/.wh.hidden", "")))
	top := track(layer(t, "top", reg("release-manifests/image-references", "refs-top")))
	stopWhen := func(names ...string) func([]string) bool {
		return func(files []string) bool {
			have := map[string]bool{}
			for _, f := range files {
				have[f] = true
			}
			for _, n := range names {
				if !have[n] {
					return false
				}
			}
			return true
		}
	}

	dst := t.TempDir()
	_, n, err := TopDown([]Layer{base, mid, top}, dst, Options{Prefixes: []string{"release-manifests/"}}, stopWhen("release-manifests/image-references"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || opened["mid"] || opened["base"] {
		t.Fatalf("opened %d layers (%v), want only the top", n, opened)
	}
	if diff := cmp.Diff(map[string]string{"release-manifests/image-references": "refs-top"}, readTree(t, dst)); diff != "" {
		t.Fatalf("tree (-want +got):\n%s", diff)
	}

	dst = t.TempDir()
	res, n, err := TopDown([]Layer{base, mid, top}, dst, Options{Prefixes: []string{"release-manifests/"}}, stopWhen("release-manifests/release-metadata"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"release-manifests/image-references": "refs-top", "release-manifests/old": "old"}
	if diff := cmp.Diff(want, readTree(t, dst)); n != 3 || diff != "" {
		t.Fatalf("opened %d, want 3; tree (-want +got):\n%s", n, diff)
	}
	if len(res.Files) != 2 {
		t.Fatalf("Files = %v", res.Files)
	}
}

package extract

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract feeds arbitrary bytes (seeded with well-formed and hostile archives) to Tar
// and checks the invariants that make extraction safe: nothing outside dst, nothing but
// regular files and directories, nothing outside the prefixes, no file over the cap.
func FuzzExtract(f *testing.F) {
	seeds := [][]entry{
		{reg("manifests/csv.yaml", "kind: ClusterServiceVersion"), reg("metadata/annotations.yaml", "annotations: {}")},
		{reg("./manifests/a", "a"), {name: "manifests/", typ: tar.TypeDir}},
		{reg("manifests/../../escape", "x")},
		{reg("/abs", "x")},
		{{name: "manifests/l", typ: tar.TypeSymlink, linkname: "../../etc"}},
		{{name: "manifests", typ: tar.TypeSymlink, linkname: "/"}, reg("manifests/x", "x")},
		{{name: "manifests/h", typ: tar.TypeLink, linkname: "/etc/passwd"}},
		{{name: "manifests/c", typ: tar.TypeChar}},
		{reg("manifests/.wh.a", ""), reg("manifests/.wh..wh..opq", "")},
		{reg("manifests/big", strings.Repeat("z", 2048))},
	}
	for _, s := range seeds {
		f.Add(mkTar(f, s...))
	}
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// os.MkdirTemp rather than t.TempDir: the latter made fuzzing crawl (a few execs/s).
		parent, err := os.MkdirTemp("", "fuzz-extract-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(parent)
		dst := filepath.Join(parent, "out")
		const maxFile = 1024
		res, err := Tar(bytes.NewReader(data), dst, Options{Prefixes: []string{"manifests", "metadata/"}, MaxFileSize: maxFile, MaxImageSize: 1 << 20})
		if err != nil && (errors.Is(err, ErrUnsafe) || errors.Is(err, ErrTooLarge)) && res != nil {
			t.Fatalf("result and error both set: %v", err)
		}
		// Nothing may appear next to dst.
		entries, rerr := os.ReadDir(parent)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if len(entries) != 1 || entries[0].Name() != "out" {
			t.Fatalf("extraction wrote outside dst: %v", entries)
		}
		werr := filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dst, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				t.Fatalf("non-regular %s (%v)", rel, d.Type())
			}
			if !strings.HasPrefix(rel, "manifests/") && !strings.HasPrefix(rel, "metadata/") {
				t.Fatalf("file %s outside prefixes", rel)
			}
			info, ierr := d.Info()
			if ierr != nil {
				return ierr
			}
			if info.Size() > maxFile {
				t.Fatalf("file %s is %d bytes, over the cap", rel, info.Size())
			}
			return nil
		})
		if werr != nil {
			t.Fatal(werr)
		}
	})
}

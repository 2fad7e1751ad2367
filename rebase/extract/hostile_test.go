package extract

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// paxFlood builds a tar stream whose first entry is preceded by n PAX extended headers of
// about recSize bytes each. archive/tar consumes them all inside one Next call, so header
// sizes never reach Extract's per-entry accounting.
func paxFlood(t testing.TB, n, recSize int) []byte {
	t.Helper()
	var buf bytes.Buffer
	val := strings.Repeat("x", recSize)
	rec := "comment=" + val + "\n"
	// A PAX record is "<len> <key>=<value>\n" where len counts itself.
	l := len(rec) + 1
	for len(fmt.Sprintf("%d %s", l, rec)) != l {
		l++
	}
	body := []byte(fmt.Sprintf("%d %s", l, rec))
	for i := 0; i < n; i++ {
		var hb bytes.Buffer
		tw := tar.NewWriter(&hb)
		// Write a regular header, then patch its type to 'x' (PAX) and recompute the checksum.
		if err := tw.WriteHeader(&tar.Header{Name: "PaxHeaders/x", Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		blk := hb.Bytes()[:512]
		blk[156] = tar.TypeXHeader
		copy(blk[148:156], "        ")
		sum := 0
		for _, c := range blk {
			sum += int(c)
		}
		copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
		buf.Write(blk)
		buf.Write(body)
		if pad := len(body) % 512; pad != 0 {
			buf.Write(make([]byte, 512-pad))
		}
	}
	buf.Write(mkTar(t, reg("manifests/a.yaml", "a")))
	return buf.Bytes()
}

func TestTarHeaderFloodHitsImageCap(t *testing.T) {
	raw := paxFlood(t, 64, 100<<10) // ~6.4 MiB of headers before one tiny file
	cr := &countingReader{r: bytes.NewReader(raw)}
	_, err := Tar(cr, t.TempDir(), Options{Prefixes: []string{"manifests"}, MaxImageSize: 1 << 20, Name: "img"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
	if cr.n > 2<<20 {
		t.Fatalf("read %d bytes before failing, want at most about the 1 MiB cap", cr.n)
	}
	if !strings.Contains(err.Error(), "img") {
		t.Fatalf("error %q does not name the image", err)
	}
	var _ io.Reader = cr
}

// An opaque whiteout at the image root hides every lower layer, prefixes included.
func TestRootOpaqueWhiteout(t *testing.T) {
	base := layer(t, "base", reg("manifests/old.yaml", "old"), reg("release-manifests/old", "old"))
	top := layer(t, "top", reg(".wh..wh..opq", ""), reg("manifests/new.yaml", "new"), reg("release-manifests/new", "new"))

	dst := t.TempDir()
	if _, err := Layers([]Layer{base, top}, dst, Options{Prefixes: []string{"manifests"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"manifests/new.yaml": "new"}, readTree(t, dst)); diff != "" {
		t.Fatalf("Layers tree (-want +got):\n%s", diff)
	}

	dst = t.TempDir()
	if _, _, err := TopDown([]Layer{base, top}, dst, Options{Prefixes: []string{"release-manifests"}}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"release-manifests/new": "new"}, readTree(t, dst)); diff != "" {
		t.Fatalf("TopDown tree (-want +got):\n%s", diff)
	}
}

// Deep or long names under a wanted prefix are refused before any directory is made.
func TestTarDeepPath(t *testing.T) {
	for _, name := range []string{
		"manifests/" + strings.Repeat("a/", 100000) + "f",
		"manifests/" + strings.Repeat("d", 5000),
	} {
		dst := t.TempDir()
		_, err := Tar(bytes.NewReader(mkTar(t, reg(name, "x"))), dst, Options{Prefixes: []string{"manifests"}, Name: "img"})
		if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "img") || len(err.Error()) > 600 {
			t.Fatalf("error = %.300v, want a short ErrUnsafe naming the image", err)
		}
		if entries, _ := os.ReadDir(dst); len(entries) != 0 {
			t.Fatalf("created %v", entries)
		}
	}
	// Realistic depth still works.
	name := "manifests/" + strings.Repeat("sub/", 20) + "x.yaml"
	if _, err := Tar(bytes.NewReader(mkTar(t, reg(name, "x"))), t.TempDir(), Options{Prefixes: []string{"manifests"}}); err != nil {
		t.Fatal(err)
	}
}

// Linux file names may hold a backslash (systemd's escaped unit names in a base layer);
// only names that would be written are held to the stricter rule.
func TestBackslashOutsidePrefixes(t *testing.T) {
	b := mkTar(t, reg(`usr/lib/systemd/system/system-systemd\x2dcryptsetup.slice`, "unit"), reg("manifests/a.yaml", "a"))
	dst := t.TempDir()
	if _, err := Tar(bytes.NewReader(b), dst, Options{Prefixes: []string{"manifests"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"manifests/a.yaml": "a"}, readTree(t, dst)); diff != "" {
		t.Fatalf("tree (-want +got):\n%s", diff)
	}
	_, err := Tar(bytes.NewReader(mkTar(t, reg(`manifests\..\x`, "x"))), t.TempDir(), Options{Prefixes: []string{"manifests"}})
	if err != nil {
		t.Fatalf("a backslash name outside the prefixes (it is one odd file name at the root): %v", err)
	}
	_, err = Tar(bytes.NewReader(mkTar(t, reg(`manifests/a\b.yaml`, "x"))), t.TempDir(), Options{Prefixes: []string{"manifests"}})
	if !errors.Is(err, ErrUnsafe) {
		t.Fatalf("backslash under a prefix: error %v, want ErrUnsafe", err)
	}
}

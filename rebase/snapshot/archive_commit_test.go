package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesAnotherCommitsTarball: a local tarball whose top directory names another
// commit is not read as the payload's commit (a 4.18 archive for a 4.17 payload).
func TestLoadRefusesAnotherCommitsTarball(t *testing.T) {
	const want, other = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	mk := func(top string) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, p := range required {
			body := "kind: X\n"
			if err := tw.WriteHeader(&tar.Header{Name: top + "/" + p, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "assets.tar.gz")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := Load(context.Background(), mk("cluster-csi-snapshot-controller-operator-"+other), want, nil)
	if err == nil || !strings.Contains(err.Error(), "holds commit "+other) {
		t.Fatalf("another commit's tarball: err = %v", err)
	}
	for _, top := range []string{"cluster-csi-snapshot-controller-operator-" + want, "cluster-csi-snapshot-controller-operator-" + want[:7], "checkout"} {
		if _, err := Load(context.Background(), mk(top), want, nil); err != nil {
			t.Errorf("top %s: %v", top, err)
		}
	}
}

package testregistry_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// tarFiles lists the regular files of a gzipped archive, top directory stripped.
func tarFiles(t *testing.T, tgz []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			_, rel, _ := strings.Cut(h.Name, "/")
			out[rel] = data
		}
	}
}

// TestRawFiles: every file of every fixture archive is served at its raw URL, byte for byte;
// unknown commits, paths and traversal get 404.
func TestRawFiles(t *testing.T) {
	fsys := fixtureFS(t)
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fsys})
	entries, err := fs.ReadDir(fsys, "snapshot-assets")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no snapshot assets: %v", err)
	}
	url := func(commit, p string) string {
		return strings.NewReplacer("{commit}", commit, "{path}", p).Replace(reg.SnapshotFilesURL())
	}
	var commit string
	for _, e := range entries {
		commit = strings.TrimSuffix(e.Name(), ".tar.gz")
		tgz, _ := fs.ReadFile(fsys, "snapshot-assets/"+e.Name())
		files := tarFiles(t, tgz)
		if len(files) == 0 {
			t.Fatalf("%s: no files", e.Name())
		}
		for p, want := range files {
			if code, got := get(t, url(commit, p)); code != http.StatusOK || !bytes.Equal(got, want) {
				t.Errorf("GET %s: %d, %d bytes; want 200 with %d bytes", url(commit, p), code, len(got), len(want))
			}
		}
	}
	for _, u := range []string{
		url(strings.Repeat("0", 40), "assets/serviceaccount.yaml"),
		url(commit, "assets/nope.yaml"),
		url(commit, "assets/../manifests/05_operand_rbac.yaml"),
		reg.URL() + testregistry.RawFilePrefix + commit,
	} {
		if code, _ := get(t, u); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", u, code)
		}
	}
	if got := reg.Stats().Requests(http.MethodGet, testregistry.RawFilePrefix); got == 0 {
		t.Error("raw file requests were not counted")
	}
}

// TestAddSnapshotArchive: an archive added at run time replaces the fixture's, both as an
// archive and file by file.
func TestAddSnapshotArchive(t *testing.T) {
	fsys := fixtureFS(t)
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fsys})
	entries, _ := fs.ReadDir(fsys, "snapshot-assets")
	commit := strings.TrimSuffix(entries[0].Name(), ".tar.gz")
	// Index the fixture archive first, so the replacement must drop the index.
	get(t, reg.URL()+testregistry.RawFilePrefix+commit+"/manifests/05_operand_rbac.yaml")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	_ = tw.WriteHeader(&tar.Header{Name: "top-" + commit + "/manifests/05_operand_rbac.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3})
	_, _ = tw.Write([]byte("new"))
	_ = tw.Close()
	_ = zw.Close()
	reg.AddSnapshotArchive(commit, buf.Bytes())
	if code, got := get(t, reg.URL()+testregistry.RawFilePrefix+commit+"/manifests/05_operand_rbac.yaml"); code != 200 || string(got) != "new" {
		t.Errorf("raw file after AddSnapshotArchive: %d %q", code, got)
	}
	if code, got := get(t, strings.Replace(reg.SnapshotAssetsURL(), "{commit}", commit, 1)); code != 200 || !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("archive after AddSnapshotArchive: %d, %d bytes", code, len(got))
	}
}

// TestNetworkModel: the delay is paid per request and the bandwidth cap per byte. The
// bounds are lower bounds only (the model can make things slower, never faster).
func TestNetworkModel(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	entries, _ := fs.ReadDir(fixtureFS(t), "snapshot-assets")
	url := strings.Replace(reg.SnapshotAssetsURL(), "{commit}", strings.TrimSuffix(entries[0].Name(), ".tar.gz"), 1)
	_, body := get(t, url)

	reg.SetNetwork(testregistry.Network{Delay: 30 * time.Millisecond})
	start := time.Now()
	for range 3 {
		get(t, url)
	}
	if took := time.Since(start); took < 90*time.Millisecond {
		t.Errorf("3 requests with a 30ms delay took %s", took)
	}

	// 2 × 48 KiB at 128 KiB/s: at least (96 - 16 KiB of burst) / 128 KiB/s = 0.625s.
	big := bytes.Repeat(body, 48<<10/len(body)+1)[:48<<10]
	reg.AddSnapshotArchive("feed", big)
	url = strings.Replace(reg.SnapshotAssetsURL(), "{commit}", "feed", 1)
	reg.SetNetwork(testregistry.Network{BytesPerSecond: 128 << 10})
	start = time.Now()
	get(t, url)
	_, got := get(t, url)
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("2×48 KiB at 128 KiB/s took %s, want ≥ 0.625s", took)
	}
	if !bytes.Equal(got, big) {
		t.Error("throttled body differs")
	}
	reg.SetNetwork(testregistry.Network{})
}

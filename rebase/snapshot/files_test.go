package snapshot

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// dirFetch serves a per-file source from a checkout directory, recording the URLs asked for.
type dirFetch struct {
	root string
	mu   sync.Mutex
	urls []string
}

func (d *dirFetch) fetch(_ context.Context, url string) (io.ReadCloser, error) {
	d.mu.Lock()
	d.urls = append(d.urls, url)
	d.mu.Unlock()
	rel, ok := strings.CutPrefix(url, "https://raw.example/ops/"+commit+"/")
	if !ok {
		return nil, errors.New("unexpected URL " + url)
	}
	data, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("GET " + url + ": HTTP 404 Not Found")
	}
	return io.NopCloser(bytes.NewReader(data)), err
}

func TestNeeded(t *testing.T) {
	tests := []struct {
		ocp     string
		webhook bool
	}{{"4.14", true}, {"4.17", true}, {"4.18", false}, {"4.20", false}}
	for _, tc := range tests {
		t.Run(tc.ocp, func(t *testing.T) {
			e, err := era.For(tc.ocp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Needed(e)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"assets/csi_controller_deployment.yaml", "assets/serviceaccount.yaml",
				"assets/volumesnapshotclasses.yaml", "assets/volumesnapshotcontents.yaml", "assets/volumesnapshots.yaml",
				"manifests/05_operand_rbac.yaml"}
			if tc.webhook {
				want = []string{"assets/csi_controller_deployment.yaml", "assets/rbac/webhook_clusterrole.yaml",
					"assets/rbac/webhook_clusterrolebinding.yaml", "assets/serviceaccount.yaml",
					"assets/volumesnapshotclasses.yaml", "assets/volumesnapshotcontents.yaml", "assets/volumesnapshots.yaml",
					"assets/webhook_config.yaml", "assets/webhook_deployment.yaml", "assets/webhook_service.yaml",
					"assets/webhook_serviceaccount.yaml", "manifests/05_operand_rbac.yaml"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Needed(%s) (-want +got):\n%s", tc.ocp, diff)
			}
		})
	}
}

// TestLoadFiles: a per-file source fetches exactly the era's files, and translates to the
// same objects as the whole checkout.
func TestLoadFiles(t *testing.T) {
	e, err := era.For("4.17")
	if err != nil {
		t.Fatal(err)
	}
	paths, err := Needed(e)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("testdata", "trees", "release-4.17")
	d := &dirFetch{root: root}
	src := "https://raw.example/ops/{commit}/{path}"
	a, err := LoadWith(context.Background(), LoadOptions{Source: src, Commit: commit, Paths: paths, Fetch: d.fetch, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(paths, a.Paths()); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if len(d.urls) != len(paths) {
		t.Errorf("%d requests for %d files: %v", len(d.urls), len(paths), d.urls)
	}
	if a.Source != src {
		t.Errorf("source %q", a.Source)
	}
	whole, err := LoadWith(context.Background(), LoadOptions{Source: root, Commit: commit, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(whole.Files, a.Files); diff != "" {
		t.Errorf("per-file and directory sources read different files (-directory +per-file):\n%s", diff)
	}
	if diff := cmp.Diff(whole.Digests(), a.Digests()); diff != "" || len(a.Digests()) != len(paths) {
		t.Errorf("%d digests for %d paths; (-directory +per-file):\n%s", len(a.Digests()), len(paths), diff)
	}
	r1, err := Translate(a, e)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Translate(whole, e)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(renderResult(t, r1, shipped(t, r1, e)), renderResult(t, r2, shipped(t, r2, e))) {
		t.Error("per-file and directory sources translate differently")
	}
}

func TestLoadFilesErrors(t *testing.T) {
	root := filepath.Join("testdata", "trees", "release-4.17")
	src := "https://raw.example/ops/{commit}/{path}"
	tests := []struct {
		name  string
		opts  LoadOptions
		fetch FetchFunc
		want  []string
	}{
		{name: "missing file", opts: LoadOptions{Paths: []string{"assets/serviceaccount.yaml", "assets/gone.yaml"}},
			want: []string{"file assets/gone.yaml", "HTTP 404", commit}},
		{name: "no paths", opts: LoadOptions{}, want: []string{"needs the paths to read"}},
		{name: "path outside assets", opts: LoadOptions{Paths: []string{"vendor/x.go"}}, want: []string{"vendor/x.go is not an assets/ file"}},
		{name: "oversized file", opts: LoadOptions{Paths: []string{"assets/serviceaccount.yaml"}},
			fetch: func(context.Context, string) (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(make([]byte, MaxFileBytes+1))), nil
			}, want: []string{"assets/serviceaccount.yaml", "2097152-byte limit"}},
		{name: "directory lacks a needed file", opts: LoadOptions{Source: root, Paths: []string{"assets/gone.yaml"}},
			want: []string{"missing assets/gone.yaml", root}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Commit = commit
			if o.Source == "" {
				o.Source = src
			}
			o.Fetch = (&dirFetch{root: root}).fetch
			if tc.fetch != nil {
				o.Fetch = tc.fetch
			}
			_, err := LoadWith(context.Background(), o)
			if err == nil {
				t.Fatal("LoadWith succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestFileURL(t *testing.T) {
	got := FileURL(DefaultSource, commit, "assets/rbac/webhook_clusterrole.yaml")
	want := "https://raw.githubusercontent.com/openshift/cluster-csi-snapshot-controller-operator/" + commit + "/assets/rbac/webhook_clusterrole.yaml"
	if got != want {
		t.Errorf("FileURL = %s, want %s", got, want)
	}
}

package testregistry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

func fixtureFS(t testing.TB) fs.FS {
	t.Helper()
	return testregistry.MustDefaultFixtures(t)
}

// layoutIndex lists each fixture repository's index.json entries.
func layoutIndex(t testing.TB, fsys fs.FS) map[string]*v1.IndexManifest {
	t.Helper()
	out := map[string]*v1.IndexManifest{}
	err := fs.WalkDir(fsys, "images", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "blobs" {
			return fs.SkipDir
		}
		if d.Name() != "oci-layout" {
			return nil
		}
		dir := path.Dir(p)
		raw, err := fs.ReadFile(fsys, dir+"/index.json")
		if err != nil {
			return err
		}
		idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(dir, "images/")] = idx
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d fixture repositories found; run make fixtures", len(out))
	}
	return out
}

var relatedRepos = map[string]bool{
	"registry.redhat.io/lvms4/lvms-rhel9-operator":                true,
	"registry.redhat.io/lvms4/lvms-must-gather-rhel9":             true,
	"registry.redhat.io/lvms4/topolvm-rhel9":                      true,
	"registry.redhat.io/openshift4/ose-csi-node-driver-registrar": true,
	"registry.redhat.io/openshift4/ose-csi-livenessprobe":         true,
	"registry.redhat.io/openshift4/ose-csi-external-resizer":      true,
	"registry.redhat.io/openshift4/ose-csi-external-provisioner":  true,
	"registry.redhat.io/openshift4/ose-kube-rbac-proxy":           true,
	"registry.redhat.io/openshift4/ose-csi-external-snapshotter":  true,
}

// pullImage reads the manifest, config and every layer of an image; ggcr verifies each
// blob against its digest while reading.
func pullImage(img v1.Image) error {
	if _, err := img.ConfigFile(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func TestPullEveryFixture(t *testing.T) {
	fsys := fixtureFS(t)
	repos := layoutIndex(t, fsys)
	for _, tc := range []struct {
		name       string
		user, pass string
	}{
		{name: "anonymous"},
		{name: "basic-auth", user: "fixture-user", pass: "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := testregistry.NewForTest(t, testregistry.Options{Username: tc.user, Password: tc.pass, Fixtures: fsys})
			opts := []remote.Option{remote.WithContext(context.Background())}
			if tc.user != "" {
				opts = append(opts, remote.WithAuth(&authn.Basic{Username: tc.user, Password: tc.pass}))
				// Without credentials every registry call is refused with a Basic challenge.
				resp, err := http.Get(reg.URL() + "/v2/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
					t.Fatalf("GET /v2/ without credentials: %d %q, want 401 with Basic challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
				}
				repo, _ := name.NewRepository(reg.Host()+"/registry.redhat.io/lvms4/lvms-operator-bundle", name.Insecure)
				_, err = remote.List(repo)
				var terr *transport.Error
				if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
					t.Fatalf("anonymous list with auth on: err = %v, want 401", err)
				}
				_, err = remote.List(repo, remote.WithAuth(&authn.Basic{Username: tc.user, Password: "wrong"}))
				if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
					t.Fatalf("list with a wrong password: err = %v, want 401", err)
				}
			}
			images, lists := 0, 0
			for repoName, idx := range repos {
				repo, err := name.NewRepository(reg.Host()+"/"+repoName, name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]bool{}
				for _, d := range idx.Manifests {
					if tag := d.Annotations["org.opencontainers.image.ref.name"]; tag != "" {
						want[tag] = true
					}
				}
				tags, err := remote.List(repo, opts...)
				if err != nil {
					t.Fatalf("listing %s: %v", repoName, err)
				}
				if len(tags) != len(want) {
					t.Errorf("%s: listed %d tags %v, layout has %d", repoName, len(tags), tags, len(want))
				}
				for _, tag := range tags {
					if !want[tag] {
						t.Errorf("%s: unexpected tag %q", repoName, tag)
					}
				}
				for _, d := range idx.Manifests {
					ref := name.Reference(repo.Digest(d.Digest.String()))
					if tag := d.Annotations["org.opencontainers.image.ref.name"]; tag != "" {
						ref = repo.Tag(tag)
					}
					if strings.HasSuffix(ref.Identifier(), ".sig") {
						continue // a .sig tag serves the registry's own signatures (signatures.go)
					}
					desc, err := remote.Get(ref, opts...)
					if err != nil {
						t.Fatalf("get %s: %v", ref, err)
					}
					if desc.Digest != d.Digest {
						t.Errorf("%s: digest %s, layout says %s", ref, desc.Digest, d.Digest)
					}
					if !desc.MediaType.IsIndex() {
						img, err := desc.Image()
						if err != nil {
							t.Fatal(err)
						}
						if err := pullImage(img); err != nil {
							t.Fatalf("pulling %s: %v", ref, err)
						}
						images++
						continue
					}
					lists++
					idxm, err := desc.ImageIndex()
					if err != nil {
						t.Fatal(err)
					}
					im, err := idxm.IndexManifest()
					if err != nil {
						t.Fatal(err)
					}
					seen := map[string]string{}
					for _, child := range im.Manifests {
						if child.Platform == nil {
							t.Fatalf("%s: child %s has no platform", ref, child.Digest)
						}
						if prev, dup := seen[child.Digest.String()]; dup {
							t.Errorf("%s: %s and %s share digest %s", ref, prev, child.Platform.Architecture, child.Digest)
						}
						seen[child.Digest.String()] = child.Platform.Architecture
						img, err := remote.Image(repo.Digest(child.Digest.String()), opts...)
						if err != nil {
							t.Fatalf("child %s of %s: %v", child.Digest, ref, err)
						}
						cfg, err := img.ConfigFile()
						if err != nil {
							t.Fatal(err)
						}
						if cfg.Architecture != child.Platform.Architecture || cfg.OS != child.Platform.OS {
							t.Errorf("%s child %s: config says %s/%s, index says %s/%s", ref, child.Digest, cfg.OS, cfg.Architecture, child.Platform.OS, child.Platform.Architecture)
						}
						if err := pullImage(img); err != nil {
							t.Fatalf("pulling %s@%s: %v", repoName, child.Digest, err)
						}
						images++
					}
					if relatedRepos[repoName] {
						var archs []string
						for _, a := range seen {
							archs = append(archs, a)
						}
						if len(seen) != 4 || !hasAll(archs, "amd64", "arm64", "ppc64le", "s390x") {
							t.Errorf("%s: platforms %v, want amd64, arm64, ppc64le, s390x with distinct digests", ref, archs)
						}
					}
				}
			}
			t.Logf("pulled %d images and %d lists from %d repositories; %d bytes served", images, lists, len(repos), reg.Stats().Bytes())
			if reg.Stats().BlobGETs() == 0 || reg.Stats().ManifestGETs() == 0 {
				t.Errorf("stats did not count blob/manifest GETs: %+v", reg.Stats())
			}
		})
	}
}

func hasAll(have []string, want ...string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func TestTagPagination(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fixtureFS(t)})
	repo, _ := name.NewRepository(reg.Host()+"/registry.redhat.io/lvms4/lvms-operator-bundle", name.Insecure)
	all, err := remote.List(repo)
	if err != nil {
		t.Fatal(err)
	}
	reg.ResetStats()
	paged, err := remote.List(repo, remote.WithPageSize(4))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paged, ",") != strings.Join(all, ",") {
		t.Fatalf("paged listing %v differs from full listing %v", paged, all)
	}
	wantPages := (len(all) + 3) / 4
	if got := reg.Stats().Requests(http.MethodGet, "/tags/list"); got < wantPages {
		t.Errorf("listing %d tags 4 at a time took %d requests, want at least %d", len(all), got, wantPages)
	}
	for _, tc := range []struct {
		name, query string
		wantTags    string
		wantLink    bool
	}{
		{"first page", "?n=2", strings.Join(all[:2], ","), true},
		{"after last tag", "?n=2&last=" + all[len(all)-1], "", false},
		{"last page", "?n=100&last=" + all[len(all)-2], all[len(all)-1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(reg.URL() + "/v2/registry.redhat.io/lvms4/lvms-operator-bundle/tags/list" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var got struct{ Tags []string }
			if err := jsonUnmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Tags, ",") != tc.wantTags {
				t.Errorf("tags = %v, want %s", got.Tags, tc.wantTags)
			}
			if (resp.Header.Get("Link") != "") != tc.wantLink {
				t.Errorf("Link = %q, want present=%v", resp.Header.Get("Link"), tc.wantLink)
			}
		})
	}
}

func TestSnapshotAssets(t *testing.T) {
	fsys := fixtureFS(t)
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fsys, Username: "u", Password: "p"})
	entries, err := fs.ReadDir(fsys, "snapshot-assets")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no snapshot assets: %v", err)
	}
	for _, e := range entries {
		commit := strings.TrimSuffix(e.Name(), ".tar.gz")
		url := strings.Replace(reg.SnapshotAssetsURL(), "{commit}", commit, 1)
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := fs.ReadFile(fsys, "snapshot-assets/"+e.Name())
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s: %d, %d bytes; want 200 with %d bytes", url, resp.StatusCode, len(got), len(want))
		}
	}
	resp, err := http.Get(strings.Replace(reg.SnapshotAssetsURL(), "{commit}", strings.Repeat("0", 40), 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown commit: %d, want 404", resp.StatusCode)
	}
	if !strings.HasPrefix(reg.SnapshotAssetsURL(), "http://127.0.0.1:") {
		t.Errorf("SnapshotAssetsURL = %s", reg.SnapshotAssetsURL())
	}
	flags := strings.Join(reg.MirrorFlags(), " ")
	if want := "--mirror registry.redhat.io=" + reg.Host() + "/registry.redhat.io --mirror quay.io=" + reg.Host() + "/quay.io" +
		" --mirror registry.ci.openshift.org=" + reg.Host() + "/registry.ci.openshift.org" +
		" --mirror raw.githubusercontent.com=" + reg.Host() + "/raw.githubusercontent.com" +
		" --mirror storage.googleapis.com=" + reg.Host() + "/storage.googleapis.com" +
		" --mirror mirror.openshift.com=" + reg.Host() + "/mirror.openshift.com"; flags != want {
		t.Errorf("MirrorFlags = %q, want %q", flags, want)
	}
}

// bundleLayer returns the bundle repository and the digest of one layer of v4.18.4-3.
func bundleLayer(t *testing.T, reg *testregistry.Registry) (name.Repository, v1.Hash) {
	t.Helper()
	repo, _ := name.NewRepository(reg.Host()+"/registry.redhat.io/lvms4/lvms-operator-bundle", name.Insecure)
	img, err := remote.Image(repo.Tag("v4.18.4-3"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return repo, m.Layers[0].Digest
}

func TestFaults(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fixtureFS(t)})
	repo, layer := bundleLayer(t, reg)
	blobURL := reg.URL() + "/v2/" + repo.RepositoryStr() + "/blobs/" + layer.String()
	manifestURL := reg.URL() + "/v2/" + repo.RepositoryStr() + "/manifests/v4.18.4-3"

	t.Run("status once then pass", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/manifests/v4.18.4-3", Kind: testregistry.FaultStatus, Status: http.StatusServiceUnavailable, Count: 1})
		for i, want := range []int{http.StatusServiceUnavailable, http.StatusOK} {
			resp, err := http.Get(manifestURL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("request %d: %d, want %d", i, resp.StatusCode, want)
			}
		}
		if reg.FaultHits() != 1 {
			t.Errorf("FaultHits = %d, want 1", reg.FaultHits())
		}
	})
	t.Run("ggcr sees status", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Path: "/manifests/v4.18.4-3", Kind: testregistry.FaultStatus, Status: http.StatusForbidden})
		_, err := remote.Get(repo.Tag("v4.18.4-3"))
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusForbidden {
			t.Errorf("remote.Get: %v, want 403", err)
		}
	})
	t.Run("429 retry-after", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultRetryAfter, RetryAfter: 7, Count: 1})
		resp, err := http.Get(blobURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("got %d Retry-After=%q, want 429 Retry-After=7", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	})
	t.Run("connection reset", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultReset})
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := client.Get(blobURL)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET after reset fault: status %d, want a transport error", resp.StatusCode)
		}
	})
	t.Run("truncated body", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultTruncate})
		resp, err := http.Get(blobURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read %d of %d bytes, err = %v; want unexpected EOF", len(body), resp.ContentLength, err)
		}
	})
	t.Run("corrupted blob fails digest check", func(t *testing.T) {
		reg.ClearFaults()
		reg.Inject(testregistry.Fault{Path: "/blobs/" + layer.String(), Kind: testregistry.FaultCorrupt})
		l, err := remote.Layer(repo.Digest(layer.String()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, rc)
		if err == nil {
			err = rc.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("reading corrupted blob: err = %v, want a digest mismatch", err)
		}
	})
	t.Run("cleared faults pass", func(t *testing.T) {
		reg.ClearFaults()
		l, err := remote.Layer(repo.Digest(layer.String()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Errorf("clean read: %v", err)
		}
	})
}

func TestStatsCountBytes(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fixtureFS(t)})
	repo, layer := bundleLayer(t, reg)
	reg.ResetStats()
	l, err := remote.Layer(repo.Digest(layer.String()))
	if err != nil {
		t.Fatal(err)
	}
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, rc)
	rc.Close()
	st := reg.Stats()
	if st.BlobGETs() != 1 || st.BytesFor("/blobs/"+layer.String()) != n || n != size {
		t.Errorf("after one blob GET of %d bytes: %+v", size, st)
	}
	reg.ResetStats()
	if len(reg.Stats().Paths) != 0 {
		t.Errorf("ResetStats left %+v", reg.Stats())
	}
}

// TestTimeline: two requests sent together behind a 50 ms delay overlap in the timeline,
// each from its arrival to its last byte, with its status and body bytes; one sent after
// them starts after they ended; ResetStats empties it.
func TestTimeline(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Fixtures: fixtureFS(t), Network: testregistry.Network{Delay: 50 * time.Millisecond}})
	repo, layer := bundleLayer(t, reg)
	reg.ResetStats()
	get := func(p string) {
		resp, err := http.Get(reg.URL() + p)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	blob := "/v2/" + strings.TrimPrefix(repo.String(), reg.Host()+"/") + "/blobs/" + layer.String()
	done := make(chan struct{})
	go func() { get("/v2/nothing/here/manifests/latest"); close(done) }()
	get(blob)
	<-done
	get("/v2/")
	ev := reg.Timeline()
	if len(ev) != 3 {
		t.Fatalf("timeline has %d events, want 3: %+v", len(ev), ev)
	}
	first, second, third := ev[0], ev[1], ev[2]
	if !first.Start.Before(second.End) || !second.Start.Before(first.End) {
		t.Errorf("the first two requests do not overlap: %+v", ev[:2])
	}
	if first.End.Sub(first.Start) < 50*time.Millisecond {
		t.Errorf("an event lasts %s, less than the modelled delay", first.End.Sub(first.Start))
	}
	if third.Path != "/v2/" || third.Start.Before(first.End) || third.Start.Before(second.End) {
		t.Errorf("the last request %+v should start after the first two ended", third)
	}
	for _, e := range ev[:2] {
		switch e.Path {
		case blob:
			if e.Status != http.StatusOK || e.Bytes != reg.Stats().BytesFor(blob) || e.Bytes == 0 {
				t.Errorf("blob event %+v, want 200 and the %d bytes counted", e, reg.Stats().BytesFor(blob))
			}
		default:
			if e.Status != http.StatusNotFound {
				t.Errorf("unknown manifest event %+v, want 404", e)
			}
		}
	}
	var b strings.Builder
	if err := testregistry.WriteTimeline(&b, ev); err != nil || strings.Count(b.String(), "\n") != 4 || !strings.Contains(b.String(), blob) {
		t.Errorf("WriteTimeline = %q, %v; want a header and 3 lines", b.String(), err)
	}
	reg.ResetStats()
	if n := len(reg.Timeline()); n != 0 {
		t.Errorf("ResetStats left %d events", n)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := testregistry.Start(testregistry.Options{Fixtures: fstestEmpty{}}); err == nil {
		t.Error("Start with an empty fixture tree succeeded")
	}
	if _, err := testregistry.Start(testregistry.Options{Addr: "256.0.0.1:1", Fixtures: fixtureFS(t)}); err == nil {
		t.Error("Start on an invalid address succeeded")
	}
}

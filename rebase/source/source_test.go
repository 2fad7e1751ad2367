package source

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gname "github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
)

func TestGoArch(t *testing.T) {
	for in, want := range map[string]string{"x86_64": "amd64", "aarch64": "arm64", "amd64": "amd64", "ppc64le": "ppc64le", "s390x": "s390x"} {
		if got, err := GoArch(in); err != nil || got != want {
			t.Errorf("GoArch(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := GoArch("i386"); err == nil {
		t.Error("GoArch(i386) succeeded")
	}
}

func TestResolve(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := newSource(t, w.options(t))
	res, err := s.Resolve(ctx(t), "4.18", "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Resolution{
		OCP:         "4.18",
		PayloadRule: "newest",
		Bundle:      BundleRef{Ref: bundleRepo + ":v4.18.4-10", Digest: w.bundles["v4.18.4-10"], Version: "v4.18.4-10", CSVVersion: "4.18.4"},
		Payloads: []PayloadRef{
			{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64", Digest: w.payloads["4.18.5-x86_64"], Version: "4.18.5"},
			{Arch: "aarch64", Ref: releaseRepo + ":4.18.5-aarch64", Digest: w.payloads["4.18.5-aarch64"], Version: "4.18.5"},
		},
		RelatedImages: []ImageDigests{
			{Name: "lvms-must-gather", Image: mustGathRep + "@" + w.mustGather, ListDigest: w.mustGather,
				Arches: []ArchDigest{{Arch: "x86_64", Digest: w.mgChild["amd64"]}, {Arch: "aarch64", Digest: w.mgChild["arm64"]}}},
			{Name: "lvms-operator", Image: operatorRep + "@" + w.operatorList, ListDigest: w.operatorList,
				Arches: []ArchDigest{{Arch: "x86_64", Digest: w.operatorChild["amd64"]}, {Arch: "aarch64", Digest: w.operatorChild["arm64"]}}},
		},
	}
	// The content resolution read comes back parsed, for the fetch phases: the bundle's CSV
	// and each arch's release-manifests/, with what fetching them cost.
	c := res.Content
	if c == nil || c.Bundle == nil || c.Bundle.Version != "4.18.4" || len(c.Bundle.CSV.Spec.RelatedImages) != 2 || c.BundleStats.Image != res.Bundle.Ref || len(c.BundleStats.Files) == 0 {
		t.Fatalf("bundle content %+v", c)
	}
	for _, p := range want.Payloads {
		if pl := c.Payloads[p.Arch]; pl == nil || pl.Version() != p.Version || c.PayloadStats[p.Arch].Image != p.Ref || len(c.PayloadStats[p.Arch].Files) == 0 {
			t.Fatalf("payload content of %s: %+v %+v", p.Arch, pl, c.PayloadStats[p.Arch])
		}
	}
	res.Content = nil
	if diff := cmp.Diff(want, res, cmpResolution); diff != "" {
		t.Fatalf("resolution (-want +got):\n%s", diff)
	}
	// Outputs name canonical repositories, never the mirror.
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), w.reg.host()) {
		t.Fatalf("resolution leaks the mirror host: %s", b)
	}
	// Tag lists were paged (page size 3) and followed to the end.
	if n := w.reg.count("GET", "lvms-operator-bundle/tags/list"); n < 3 {
		t.Fatalf("bundle tag list took %d requests, want pagination", n)
	}
}

func TestResolveErrors(t *testing.T) {
	w := newWorld(t, worldOpts{})
	tests := []struct {
		name  string
		mod   func(*Options)
		ocp   string
		lvms  string
		err   string
		check func(*testing.T, *Resolution)
	}{
		{name: "no bundle for minor", ocp: "4.18", lvms: "4.20", err: "no bundle tag vX.Y.Z[-N] for 4.20"},
		{name: "payload arch missing", ocp: "4.19", lvms: "4.18", err: "no payload of 4.19 is published for every arch (x86_64, aarch64) in quay.io/openshift-release-dev/ocp-release: newest x86_64: 4.19.0; newest aarch64: none"},
		{name: "payload metadata lies", ocp: "4.17", lvms: "4.18", err: "release-metadata version 4.17.8 does not match tag 4.17.9-x86_64"},
		{name: "csv minor skew", ocp: "4.16", lvms: "4.16", mod: func(o *Options) {
			o.BundleRef = bundleRepo + ":v4.16.2"
			o.ReleaseRefs = map[string]string{"x86_64": releaseRepo + ":4.18.5-x86_64", "aarch64": releaseRepo + ":4.18.5-aarch64"}
		}, err: "spec.version 4.15.3 is LVMS 4.15, want 4.16"},
		{name: "csv minor skew allowed, payload minor checked", ocp: "4.16", lvms: "4.16", mod: func(o *Options) {
			o.BundleRef = bundleRepo + ":v4.16.2"
			o.AllowVersionSkew = true
			o.ReleaseRefs = map[string]string{"x86_64": releaseRepo + ":4.18.5-x86_64", "aarch64": releaseRepo + ":4.18.5-aarch64"}
		}, err: "release-metadata version 4.18.5 is OpenShift 4.18, want 4.16"},
		{name: "era bundle minor", ocp: "4.18", lvms: "4.15", mod: func(o *Options) { o.BundleRef = bundleRepo + ":v4.16.2" }, check: func(t *testing.T, r *Resolution) {
			if r.Bundle.CSVVersion != "4.15.3" || r.Bundle.Version != "v4.16.2" {
				t.Fatalf("bundle %+v", r.Bundle)
			}
		}},
		{name: "prerelease", ocp: "4.18", lvms: "4.18", mod: func(o *Options) { o.AllowPrerelease = true }, check: func(t *testing.T, r *Resolution) {
			if r.Payloads[0].Version != "4.18.6-rc.1" || r.Payloads[1].Ref != releaseRepo+":4.18.6-rc.1-aarch64" {
				t.Fatalf("payloads %+v", r.Payloads)
			}
		}},
		{name: "unknown pinned tag lists nearest", ocp: "4.18", lvms: "4.18", mod: func(o *Options) { o.BundleRef = bundleRepo + ":v4.18.5" }, err: `tag "v4.18.5" not found; nearest tags: v4.18.4, v4.16.2, v4.17.1, v4.18, v4.18.4-2`},
		{name: "partial payload pins", ocp: "4.18", lvms: "4.18", mod: func(o *Options) { o.ReleaseRefs = map[string]string{"x86_64": releaseRepo + ":4.18.5-x86_64"} }, err: "not for aarch64"},
		{name: "multi payload pin picks the arch child", ocp: "4.18", lvms: "4.18", mod: func(o *Options) {
			o.ReleaseRefs = map[string]string{"x86_64": releaseRepo + ":4.18.5-multi", "aarch64": releaseRepo + ":4.18.5-multi"}
		}, check: func(t *testing.T, r *Resolution) {
			for _, p := range r.Payloads {
				if p.ListDigest != w.payloads["4.18.5-multi"] || p.Digest != w.payloads["4.18.5-"+p.Arch] || p.Version != "4.18.5" {
					t.Fatalf("payload %+v", p)
				}
			}
		}},
		{name: "bad minor", ocp: "4", err: `expected X.Y`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := w.options(t)
			if tc.mod != nil {
				tc.mod(&o)
			}
			s := newSource(t, o)
			res, err := s.Resolve(ctx(t), tc.ocp, tc.lvms)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res)
		})
	}
}

func TestImageDigests(t *testing.T) {
	w := newWorld(t, worldOpts{})
	s := newSource(t, w.options(t))
	d, err := s.ImageDigests(ctx(t), operatorRep+"@"+w.operatorList, []string{"ppc64le", "aarch64"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ListDigest != w.operatorList || !reflect.DeepEqual(d.Arches, []ArchDigest{{Arch: "ppc64le", Digest: w.operatorChild["ppc64le"]}, {Arch: "aarch64", Digest: w.operatorChild["arm64"]}}) {
		t.Fatalf("digests %+v", d)
	}
	if _, err := s.ImageDigests(ctx(t), mustGathRep+"@"+w.mustGather, []string{"x86_64", "s390x"}); err == nil ||
		!strings.Contains(err.Error(), "has no entry for arch s390x (linux/s390x)") || !strings.Contains(err.Error(), mustGathRep) {
		t.Fatalf("error %v", err)
	}
	// A single-arch image: its config decides.
	d, err = s.ImageDigests(ctx(t), releaseRepo+":4.18.5-aarch64", []string{"aarch64"})
	if err != nil || d.ListDigest != "" || d.Arches[0].Digest != w.payloads["4.18.5-aarch64"] {
		t.Fatalf("single-arch: %+v, %v", d, err)
	}
	if _, err := s.ImageDigests(ctx(t), releaseRepo+":4.18.5-aarch64", []string{"x86_64"}); err == nil || !strings.Contains(err.Error(), "single-arch linux/arm64: no entry for arch x86_64") {
		t.Fatalf("error %v", err)
	}
}

func TestFetchSelective(t *testing.T) {
	w := newWorld(t, worldOpts{filler: 64 << 10})
	s := newSource(t, w.options(t))
	dir := t.TempDir()
	st, err := s.FetchPayload(ctx(t), PayloadRef{Arch: "aarch64", Ref: releaseRepo + ":4.18.5-aarch64"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	// Manifest + config + top layer: the 64 KiB base and the middle layer are never pulled.
	if got := w.reg.blobGETs(); got != 2 || st.LayersRead != 1 || st.LayersTotal != 3 || st.BlobsFetched != 2 {
		t.Fatalf("blob GETs %d, stats %+v", got, st)
	}
	// The per-image byte count is what the registry actually served.
	if served := w.reg.fetchedBlobBytes(); st.BytesFetched != served || served > 8<<10 {
		t.Fatalf("stats say %d bytes, registry served %d", st.BytesFetched, served)
	}
	want := []string{ImageReferencesFile, "release-manifests/0000_50_cluster-csi-snapshot-controller-operator_07_deployment.yaml", ReleaseMetadataFile}
	sortStrings(want)
	if !reflect.DeepEqual(st.Files, want) {
		t.Fatalf("files %v", st.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifests")); !os.IsNotExist(err) {
		t.Fatal("payload extraction wrote outside release-manifests/")
	}

	bdir := t.TempDir()
	st, err = s.FetchBundle(ctx(t), BundleRef{Ref: bundleRepo + ":v4.18.4"}, bdir)
	if err != nil {
		t.Fatal(err)
	}
	// Whiteout in the top layer removed stale.yaml; tests/ is not wanted.
	if want := []string{"manifests/lvms-operator.clusterserviceversion.yaml", "metadata/annotations.yaml", "metadata/tag"}; !reflect.DeepEqual(st.Files, want) {
		t.Fatalf("bundle files %v", st.Files)
	}
	if _, err := os.Stat(filepath.Join(bdir, "manifests", "stale.yaml")); !os.IsNotExist(err) {
		t.Fatal("whiteout not applied")
	}
}

func TestWarmCacheAndOffline(t *testing.T) {
	w := newWorld(t, worldOpts{})
	o := w.options(t)
	run := func(s *Source) *Resolution {
		t.Helper()
		res, err := s.Resolve(ctx(t), "4.18", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FetchBundle(ctx(t), res.Bundle, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Payloads {
			if _, err := s.FetchPayload(ctx(t), p, t.TempDir()); err != nil {
				t.Fatal(err)
			}
		}
		return res
	}
	cold := run(newSource(t, o))
	if w.reg.blobGETs() == 0 {
		t.Fatal("cold run fetched no blobs")
	}
	w.reg.reset()
	warm := run(newSource(t, o))
	if n := w.reg.blobGETs(); n != 0 {
		t.Fatalf("warm run issued %d blob GETs, want 0", n)
	}
	// Tags are not trusted from the cache online: the lists were fetched again.
	if w.reg.count("GET", "/tags/list") == 0 {
		t.Fatal("warm run trusted cached tags")
	}
	// The content read is the same; what it cost is not (Content is not part of the output).
	if !reflect.DeepEqual(cold.Content.Bundle, warm.Content.Bundle) || !reflect.DeepEqual(cold.Content.Payloads, warm.Content.Payloads) {
		t.Fatal("warm resolution read other content")
	}
	if diff := cmp.Diff(output(cold), output(warm), cmpResolution); diff != "" {
		t.Fatalf("warm resolution differs (-cold +warm):\n%s", diff)
	}

	// Corrupt a cached blob: it is detected, dropped and fetched again.
	var victim string
	var biggest int64
	_ = filepath.Walk(filepath.Join(o.CacheDir, "blobs"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Size() <= biggest {
			return nil
		}
		// Layers only (gzip magic): manifests are re-read by tag, not by digest.
		if b, _ := os.ReadFile(p); len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
			victim, biggest = p, fi.Size()
		}
		return nil
	})
	if err := os.WriteFile(victim, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.reg.reset()
	run(newSource(t, o))
	if n, m := w.reg.blobGETs(), w.reg.count("GET", filepath.Base(victim)); n != 1 || m != 1 {
		t.Fatalf("after corrupting one cache entry: %d blob GETs (%d of it), want 1", n, m)
	}

	// Offline: the registry is gone, the cache answers, tags included.
	w.reg.srv.Close()
	oo := o
	oo.Offline = true
	off := run(newSource(t, oo))
	if diff := cmp.Diff(output(cold), output(off), cmpResolution); diff != "" {
		t.Fatalf("offline resolution differs (-online +offline):\n%s", diff)
	}
	if !reflect.DeepEqual(cold.Content.Bundle, off.Content.Bundle) {
		t.Fatal("offline resolution read other bundle content")
	}
	oo.CacheDir = t.TempDir()
	if _, err := newSource(t, oo).Resolve(ctx(t), "4.18", ""); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Fatalf("offline with empty cache: %v", err)
	}
}

// output is res as the output shows it: without the content read (and its cost).
func output(res *Resolution) Resolution {
	out := *res
	out.Content = nil
	return out
}

func TestConcurrentCache(t *testing.T) {
	w := newWorld(t, worldOpts{filler: 32 << 10})
	o := w.options(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := New(o)
			if err == nil {
				_, err = s.FetchPayload(ctx(t), PayloadRef{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64"}, t.TempDir())
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(o.CacheDir, "blobs", "sha256", ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func writeAuthFile(t *testing.T, path, host, user, pass string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}}})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAuth(t *testing.T) {
	w := newWorld(t, worldOpts{user: "robot", pass: "s3cret-token"})
	host := w.reg.host()
	ref := PayloadRef{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64"}
	tests := []struct {
		name  string
		setup func(t *testing.T, home string) string // returns --authfile
		err   string
	}{
		{name: "explicit --authfile", setup: func(t *testing.T, home string) string {
			p := filepath.Join(t.TempDir(), "auth.json")
			writeAuthFile(t, p, host, "robot", "s3cret-token")
			// A wrong pull secret later in the order must not be used.
			writeAuthFile(t, filepath.Join(home, ".pull-secret.json"), host, "robot", "wrong")
			return p
		}},
		{name: "REGISTRY_AUTH_FILE", setup: func(t *testing.T, home string) string {
			p := filepath.Join(t.TempDir(), "auth.json")
			writeAuthFile(t, p, host, "robot", "s3cret-token")
			t.Setenv("REGISTRY_AUTH_FILE", p)
			return ""
		}},
		{name: "pull secret before podman and docker", setup: func(t *testing.T, home string) string {
			writeAuthFile(t, filepath.Join(home, ".pull-secret.json"), host, "robot", "s3cret-token")
			writeAuthFile(t, filepath.Join(home, ".config", "containers", "auth.json"), host, "robot", "wrong")
			return ""
		}},
		{name: "podman auth.json", setup: func(t *testing.T, home string) string {
			writeAuthFile(t, filepath.Join(home, ".config", "containers", "auth.json"), "https://"+host+"/", "robot", "s3cret-token")
			writeAuthFile(t, filepath.Join(home, ".docker", "config.json"), host, "robot", "wrong")
			return ""
		}},
		{name: "docker config.json, repository-scoped key", setup: func(t *testing.T, home string) string {
			writeAuthFile(t, filepath.Join(home, ".docker", "config.json"), host+"/quay.io", "robot", "s3cret-token")
			return ""
		}},
		{name: "docker credential helper", setup: func(t *testing.T, home string) string {
			bin := t.TempDir()
			helper := "#!/bin/sh\ncat >/dev/null\necho '{\"Username\":\"robot\",\"Secret\":\"s3cret-token\"}'\n"
			if err := os.WriteFile(filepath.Join(bin, "docker-credential-lvmstest"), []byte(helper), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			// docker/cli caches the config directory derived from HOME once per process;
			// naming it keeps repeated runs (-count) honest.
			t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
			cfg := `{"credHelpers":{"` + host + `":"lvmstest"}}`
			if err := os.MkdirAll(filepath.Join(home, ".docker"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".docker", "config.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			return ""
		}},
		{name: "wrong password names registry and file", setup: func(t *testing.T, home string) string {
			writeAuthFile(t, filepath.Join(home, ".pull-secret.json"), host, "robot", "wrong-password")
			return ""
		}, err: "denied access (HTTP 401)"},
		{name: "no credentials", setup: func(t *testing.T, home string) string { return "" }, err: "no credentials for this registry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := w.options(t)
			home := testregistry.NoCredentials(t)
			o.AuthFile = tc.setup(t, home)
			var logs strings.Builder
			// -v 1: which file served the credentials is said at V(1).
			o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-1)}))
			s, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.FetchPayload(ctx(t), ref, t.TempDir())
			if strings.Contains(logs.String(), "s3cret-token") || strings.Contains(logs.String(), "wrong-password") {
				t.Fatalf("log leaks a credential: %s", logs.String())
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				// The log says which file supplied the credentials.
				if !strings.Contains(logs.String(), "using registry credentials") || !strings.Contains(logs.String(), "authFile=") {
					t.Fatalf("log does not name the auth file: %s", logs.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), host) {
				t.Fatalf("error %v, want %q naming %s", err, tc.err, host)
			}
			if strings.Contains(err.Error(), "wrong-password") || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("robot:wrong-password"))) {
				t.Fatal("error leaks the credential")
			}
			if tc.name == "wrong password names registry and file" && !strings.Contains(err.Error(), filepath.Join(home, ".pull-secret.json")) {
				t.Fatalf("error does not name the auth file: %v", err)
			}
		})
	}
	if _, err := New(Options{AuthFile: filepath.Join(t.TempDir(), "missing.json")}); err == nil {
		t.Fatal("missing --authfile accepted")
	}
}

// TestMirrorsAndIDMS: related images that exist only on the IDMS mirror are pulled from
// it; tags come through --mirror; outputs stay canonical. (Which locations a pull tries is
// rebase/source/mirror's TestLocations.)
func TestMirrorsAndIDMS(t *testing.T) {
	// Integration: related images exist only on the IDMS mirror; tags via --mirror.
	w := newWorld(t, worldOpts{})
	w.reg.pushIndex(t, "idms-mirror/lvms4/lvms-rhel9-operator@"+w.operatorList, mustPullIndex(t, w, operatorRep+"@"+w.operatorList))
	w.reg.pushIndex(t, "idms-mirror/lvms4/lvms-must-gather-rhel9@"+w.mustGather, mustPullIndex(t, w, mustGathRep+"@"+w.mustGather))
	idms := filepath.Join(t.TempDir(), "idms.yaml")
	if err := os.WriteFile(idms, []byte("kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: registry.redhat.io/lvms4\n    mirrors: ["+w.reg.host()+"/idms-mirror/lvms4]\n    mirrorSourcePolicy: NeverContactSource\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := w.options(t)
	o.IDMSFile = idms
	w.reg.reset()
	res, err := newSource(t, o).Resolve(ctx(t), "4.18", "")
	if err != nil {
		t.Fatal(err)
	}
	if w.reg.count("GET", "/idms-mirror/lvms4/lvms-rhel9-operator/manifests/") != 1 || w.reg.count("GET", "/registry.redhat.io/lvms4/lvms-rhel9-operator/") != 0 {
		t.Fatalf("related image not pulled through the IDMS mirror: %v", w.reg.requests)
	}
	if res.RelatedImages[1].Image != operatorRep+"@"+w.operatorList {
		t.Fatalf("output not canonical: %s", res.RelatedImages[1].Image)
	}
}

func mustPullIndex(t *testing.T, w *world, canonical string) v1.ImageIndex {
	t.Helper()
	ref, err := gname.ParseReference(w.reg.host() + "/" + canonical)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestFaults(t *testing.T) {
	w := newWorld(t, worldOpts{})
	ref := PayloadRef{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64"}
	tests := []struct {
		name    string
		f       fault
		err     string
		minWait time.Duration
	}{
		{name: "500 on manifest", f: fault{match: "/manifests/", kind: faultStatus, status: 500, times: 2}},
		{name: "503 on blob", f: fault{match: "/blobs/", kind: faultStatus, status: 503, times: 2}},
		{name: "429 with Retry-After capped", f: fault{match: "/blobs/", kind: faultStatus, status: 429, retryAfter: "3600", times: 1}, minWait: 20 * time.Millisecond},
		{name: "429 with short Retry-After", f: fault{match: "/manifests/", kind: faultStatus, status: 429, retryAfter: "0", times: 3}},
		{name: "connection reset", f: fault{match: "/blobs/", kind: faultReset, times: 2}},
		{name: "truncated blob", f: fault{match: "/blobs/", kind: faultTruncate, times: 2}},
		{name: "truncated manifest", f: fault{match: "/manifests/", kind: faultTruncate, times: 1}},
		// A whole body that does not match its digest is reported at once, not fetched again.
		{name: "corrupted blob reported", f: fault{match: "/blobs/", kind: faultCorrupt, times: 1}, err: "does not match its digest (not retried)"},
		{name: "persistent 500", f: fault{match: "/blobs/", kind: faultStatus, status: 500, times: -1}, err: "500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w.reg.reset()
			w.reg.inject(tc.f)
			s := newSource(t, w.options(t))
			start := time.Now()
			_, err := s.FetchPayload(ctx(t), ref, t.TempDir())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				// The report names the image and the blob digest.
				if !strings.Contains(err.Error(), releaseRepo) || !strings.Contains(err.Error(), "sha256:") {
					t.Fatalf("error does not name image and digest: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < tc.minWait || d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
			w.reg.mu.Lock()
			left := w.reg.faults[0].times
			w.reg.mu.Unlock()
			if left != 0 {
				t.Fatalf("fault not exercised (%d left)", left)
			}
		})
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.reg.inject(fault{match: "/blobs/", kind: faultDelay, delay: 30 * time.Second, times: -1})
	s := newSource(t, w.options(t))
	c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.FetchPayload(c, PayloadRef{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64"}, t.TempDir())
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") && !strings.Contains(err.Error(), "context") {
		t.Fatalf("error does not say it timed out: %v", err)
	}
}

func TestOCILayout(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img := image(t, "amd64", tarLayer(t, map[string]string{
		"manifests/csv.yaml":        csvYAML("4.18.7", nil),
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: lvms-operator\n",
	}))
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v4.18.7"})); err != nil {
		t.Fatal(err)
	}
	for arch, goarch := range map[string]string{"x86_64": "amd64", "aarch64": "arm64"} {
		pl := image(t, goarch, randomLayer(t, 128), tarLayer(t, map[string]string{
			ImageReferencesFile: `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"4.18.7"},"spec":{"tags":[]}}`,
			ReleaseMetadataFile: `{"kind":"cincinnati-metadata-v0","version":"4.18.7","previous":[]}`,
		}))
		if err := p.AppendImage(pl, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "4.18.7-" + arch})); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{CacheDir: t.TempDir(), Offline: true, BundleRepo: "oci:" + dir, ReleaseRepo: "oci:" + dir}
	s := newSource(t, o)
	tags, err := s.ListTags(ctx(t), "oci:"+dir)
	if err != nil || !reflect.DeepEqual(tags, []string{"4.18.7-aarch64", "4.18.7-x86_64", "v4.18.7"}) {
		t.Fatalf("tags %v %v", tags, err)
	}
	b, _, err := s.resolveBundle(ctx(t), "4.18", newContent())
	if err != nil {
		t.Fatal(err)
	}
	if b.Ref != "oci:"+dir+":v4.18.7" || b.Digest != digestOf(t, img) || b.CSVVersion != "4.18.7" {
		t.Fatalf("bundle %+v", b)
	}
	// A whole resolution from OCI layouts alone, offline, with an empty cache.
	res, err := s.Resolve(ctx(t), "4.18", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Payloads[1].Ref != "oci:"+dir+":4.18.7-aarch64" || res.Payloads[1].Version != "4.18.7" || res.Bundle.Version != "v4.18.7" {
		t.Fatalf("resolution %+v", res)
	}
	st, err := s.FetchBundle(ctx(t), BundleRef{Ref: "oci:" + dir + "@" + digestOf(t, img)}, t.TempDir())
	if err != nil || len(st.Files) != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := s.FetchBundle(ctx(t), BundleRef{Ref: "oci:" + dir + ":nope"}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "tags: 4.18.7-aarch64, 4.18.7-x86_64, v4.18.7") {
		t.Fatalf("error %v", err)
	}
}

func TestHostileBundle(t *testing.T) {
	w := newWorld(t, worldOpts{})
	hostile := map[string][]byte{
		"symlink": mkRawTar(t, rawEntry{name: "manifests/x", typ: '2', link: "/etc/passwd"}),
		"dotdot":  mkRawTar(t, rawEntry{name: "manifests/../../x", typ: '0', body: "x"}),
		"bomb":    mkRawTar(t, rawEntry{name: "manifests/big", typ: '0', body: strings.Repeat("a", 5000)}),
	}
	for name, layer := range hostile {
		t.Run(name, func(t *testing.T) {
			img := image(t, "amd64", rawTarLayer(t, layer))
			w.reg.push(t, bundleRepo+":hostile-"+name, img)
			o := w.options(t)
			o.MaxFileSize = 4096
			_, err := newSource(t, o).FetchBundle(ctx(t), BundleRef{Ref: bundleRepo + ":hostile-" + name}, t.TempDir())
			if !errors.Is(err, extract.ErrUnsafe) && !errors.Is(err, extract.ErrTooLarge) {
				t.Fatalf("error %v", err)
			}
			if !strings.Contains(err.Error(), bundleRepo) {
				t.Fatalf("error does not name the image: %v", err)
			}
		})
	}
}

type rawEntry struct {
	name, body, link string
	typ              byte
}

func mkRawTar(t *testing.T, entries ...rawEntry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Size: int64(len(e.body)), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(e.body))
	}
	_ = tw.Close()
	return buf.Bytes()
}

// cmpResolution lets cmp.Diff compare resolutions whole, BundleRef's unexported skew included.
var cmpResolution = cmp.AllowUnexported(BundleRef{})

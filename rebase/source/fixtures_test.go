package source

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// These tests run against the committed fixture images served by internal/testing/testregistry,
// checking every answer against the fixture catalog.

func fixtureCatalog(t *testing.T) *fixtures.Catalog {
	t.Helper()
	c, err := fixtures.ReadCatalog(testregistry.MustDefaultFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fixtureOptions(t *testing.T, reg *testregistry.Registry) Options {
	return Options{
		Mirrors: []Mirror{
			{Source: "registry.redhat.io", Mirror: reg.Host() + "/registry.redhat.io"},
			{Source: "quay.io", Mirror: reg.Host() + "/quay.io"},
			{Source: "registry.ci.openshift.org", Mirror: reg.Host() + "/registry.ci.openshift.org"},
		},
		CacheDir: t.TempDir(),
		Retry:    RetryOptions{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		Logger:   testLogger(t),
	}
}

func TestFixtureResolveEveryMinor(t *testing.T) {
	cat := fixtureCatalog(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	o := fixtureOptions(t, reg)
	for _, minor := range []string{"4.14", "4.15", "4.16", "4.17", "4.18", "4.20", "4.21"} {
		t.Run(minor, func(t *testing.T) {
			s := newSource(t, o)
			res, err := s.Resolve(ctx(t), minor, "")
			if err != nil {
				t.Fatal(err)
			}
			b, ok := cat.NewestBundle(minor)
			if !ok {
				t.Fatalf("catalog has no bundle for %s", minor)
			}
			if res.Bundle.Ref != b.Ref || res.Bundle.Digest != b.Digest || res.Bundle.CSVVersion != b.Version {
				t.Fatalf("bundle %+v, catalog %s %s %s", res.Bundle, b.Ref, b.Digest, b.Version)
			}
			for _, p := range res.Payloads {
				want, ok := cat.NewestPayload(minor, p.Arch)
				if !ok || p.Ref != want.Ref || p.Digest != want.Digest || p.Version != want.Version {
					t.Fatalf("payload %+v, catalog %+v", p, want)
				}
			}
			if len(res.RelatedImages) != len(b.RelatedImages) {
				t.Fatalf("%d related images, catalog %d", len(res.RelatedImages), len(b.RelatedImages))
			}
			for _, want := range b.RelatedImages {
				var got *ImageDigests
				for i := range res.RelatedImages {
					if res.RelatedImages[i].Name == want.Name {
						got = &res.RelatedImages[i]
					}
				}
				if got == nil || got.Image != want.Image {
					t.Fatalf("relatedImage %s: got %+v", want.Name, got)
				}
				for _, a := range []string{"x86_64", "aarch64"} {
					ga, _ := GoArch(a)
					if d, _ := got.For(a); d != want.Arch[ga] {
						t.Fatalf("relatedImage %s %s: %s, catalog %s", want.Name, a, d, want.Arch[ga])
					}
				}
			}
		})
	}
}

func TestFixtureWarmRunZeroBlobGETs(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	o := fixtureOptions(t, reg)
	run := func() {
		s := newSource(t, o)
		res, err := s.Resolve(ctx(t), "4.18", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FetchBundle(ctx(t), res.Bundle, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Payloads {
			st, err := s.FetchPayload(ctx(t), p, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if st.LayersRead != 1 {
				t.Fatalf("payload %s: read %d of %d layers", p.Ref, st.LayersRead, st.LayersTotal)
			}
		}
	}
	run()
	if n := reg.Stats().BlobGETs(); n == 0 {
		t.Fatal("cold run: no blob GETs counted")
	}
	reg.ResetStats()
	run()
	if n := reg.Stats().BlobGETs(); n != 0 {
		t.Fatalf("warm run: %d blob GETs, want 0", n)
	}
}

func TestFixtureAuthAndFaults(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Username: "pull", Password: "secret-pass"})
	o := fixtureOptions(t, reg)
	home := t.TempDir()
	writeAuthFile(t, filepath.Join(home, ".pull-secret.json"), reg.Host(), "pull", "secret-pass")
	setHome := func(t *testing.T) {
		t.Setenv("HOME", home)
		t.Setenv("REGISTRY_AUTH_FILE", "")
		t.Setenv("XDG_RUNTIME_DIR", "")
		t.Setenv("XDG_CONFIG_HOME", "")
		t.Setenv("DOCKER_CONFIG", "")
	}
	payload := PayloadRef{Arch: "aarch64", Ref: "quay.io/openshift-release-dev/ocp-release:4.18.10-aarch64"}
	for _, tc := range []struct {
		name string
		f    testregistry.Fault
		err  string
	}{
		{name: "none"},
		{name: "status 502", f: testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultStatus, Status: 502, Count: 2}},
		{name: "retry-after", f: testregistry.Fault{Path: "/manifests/", Kind: testregistry.FaultRetryAfter, RetryAfter: 1, Count: 1}},
		{name: "reset", f: testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultReset, Count: 2}},
		{name: "truncate", f: testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultTruncate, Count: 2}},
		// Content that does not match its digest is not downloaded again (TestHostileDigestMismatch).
		{name: "corrupt", f: testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultCorrupt, Count: 1}, err: "does not match its digest"},
		{name: "forbidden", f: testregistry.Fault{Path: "/manifests/", Kind: testregistry.FaultStatus, Status: 403}, err: "credentials from " + filepath.Join(home, ".pull-secret.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setHome(t)
			reg.ClearFaults()
			if tc.f.Kind != 0 {
				reg.Inject(tc.f)
			}
			oo := o
			oo.CacheDir = t.TempDir()
			s, err := New(oo)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.FetchPayload(ctx(t), payload, t.TempDir())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "secret-pass") {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.f.Kind != 0 && reg.FaultHits() == 0 {
				t.Fatal("fault never hit")
			}
		})
	}
}

func TestFixtureSnapshotURL(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	cat := fixtureCatalog(t)
	o := fixtureOptions(t, reg)
	u := strings.ReplaceAll(reg.SnapshotAssetsURL(), "{commit}", cat.SnapshotAssets[0].Commit)
	rc, err := newSource(t, o).FetchURL(ctx(t), u)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, rc)
	rc.Close()
	if n == 0 {
		t.Fatal("empty tarball")
	}
}

// TestFixtureNewestCommonZ: 4.22.2 and 5.0.2 are published for x86_64 only, so resolution
// takes the newest z common to both arches, warns about the newer one, and lists the LVMS
// minors published (none above 4.21).
func TestFixtureNewestCommonZ(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	o := fixtureOptions(t, reg)
	s := newSource(t, o)
	for _, tc := range []struct{ ocp, want, newer string }{{"4.22", "4.22.1", "4.22.2"}, {"5.0", "5.0.1", "5.0.2"}} {
		res, err := s.Resolve(ctx(t), tc.ocp, "4.21")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Payloads {
			if p.Version != tc.want {
				t.Errorf("%s %s: payload %s, want %s", tc.ocp, p.Arch, p.Version, tc.want)
			}
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tc.newer+" (x86_64 only)") || res.PayloadRule != "newest" {
			t.Errorf("%s: warnings %q rule %q, want one naming %s (x86_64 only)", tc.ocp, res.Warnings, res.PayloadRule, tc.newer)
		}
	}
	minors, err := s.BundleMinors(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(minors, ","); got != "4.14,4.15,4.16,4.17,4.18,4.20,4.21" {
		t.Errorf("BundleMinors = %s", got)
	}
}

// TestFixturePinnedSkew: pinned GA payloads of different z across arches are refused unless
// AllowVersionSkew (then warned); a nightly pair, whose version strings always differ, is
// accepted and both versions are kept.
func TestFixturePinnedSkew(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	const rel = "quay.io/openshift-release-dev/ocp-release:"
	ga := map[string]string{"x86_64": rel + "4.22.2-x86_64", "aarch64": rel + "4.22.1-aarch64"}
	nightly := map[string]string{
		"x86_64":  "registry.ci.openshift.org/ocp/release:4.22.0-0.nightly-2026-07-20-101112",
		"aarch64": "registry.ci.openshift.org/ocp-arm64/release-arm64:4.22.0-0.nightly-arm64-2026-07-21-030405",
	}
	for _, tc := range []struct {
		name    string
		pins    map[string]string
		skew    bool
		wantErr string
		warn    bool
	}{
		{"GA skew refused", ga, false, "pinned GA payloads differ in version across arches: x86_64 4.22.2, aarch64 4.22.1", false},
		{"GA skew allowed", ga, true, "", true},
		{"nightly pair accepted", nightly, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := fixtureOptions(t, reg)
			o.ReleaseRefs, o.AllowVersionSkew = tc.pins, tc.skew
			res, err := newSource(t, o).Resolve(ctx(t), "4.22", "4.21")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), option.AllowVersionSkew.String()) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (len(res.Warnings) > 0) != tc.warn || res.PayloadRule != "pinned" {
				t.Errorf("warnings %q rule %q", res.Warnings, res.PayloadRule)
			}
			for _, p := range res.Payloads {
				// The tag carries the version: X.Y.Z-<arch> for GA, the version itself for nightlies.
				tag := tc.pins[p.Arch][strings.LastIndex(tc.pins[p.Arch], ":")+1:]
				if p.Version != strings.TrimSuffix(tag, "-"+p.Arch) {
					t.Errorf("%s: version %s, pinned %s", p.Arch, p.Version, tc.pins[p.Arch])
				}
			}
		})
	}
}

// TestPayloadTagVersion: the version of a payload pull spec is its tag's, found past a
// registry port and before a digest; a spec pinned by digest alone names none (its
// release-metadata does), and every fixture payload's tag names its release-metadata version.
func TestPayloadTagVersion(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ ref, arch, want string }{
		{"quay.io/openshift-release-dev/ocp-release:4.18.10-x86_64", "x86_64", "4.18.10"},
		{"127.0.0.1:5000/ocp/release:4.18.10-x86_64", "x86_64", "4.18.10"},
		{"mirror.example:8443/openshift-release-dev/ocp-release:4.18.10-multi", "aarch64", "4.18.10"},
		{"quay.io/openshift-release-dev/ocp-release:4.18.10-x86_64" + digest, "x86_64", "4.18.10"},
		{"quay.io/openshift-release-dev/ocp-release" + digest, "x86_64", ""},
		{"127.0.0.1:5000/ocp/release" + digest, "aarch64", ""},
		{"quay.io/openshift-release-dev/ocp-release:latest", "x86_64", ""},
	} {
		got, err := PayloadTagVersion(tc.ref, tc.arch)
		if err != nil || got != tc.want {
			t.Errorf("PayloadTagVersion(%q, %s) = %q, %v; want %q", tc.ref, tc.arch, got, err, tc.want)
		}
	}
	if _, err := PayloadTagVersion("quay.io/Upper/Case:4.18.10-x86_64", "x86_64"); err == nil {
		t.Error("an invalid reference named a version, want its error")
	}
	for _, p := range fixtureCatalog(t).Payloads {
		if got, err := PayloadTagVersion(p.Ref, p.Arch); err != nil || got != p.Version {
			t.Errorf("PayloadTagVersion(%q, %s) = %q, %v; want %q", p.Ref, p.Arch, got, err, p.Version)
		}
	}
}

package testregistry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// sigVerifier verifies through the registry as a run does: its mirrors and its policy.
func sigVerifier(t *testing.T, reg *testregistry.Registry) *provenance.Verifier {
	t.Helper()
	var mirrors []source.Mirror
	flags := reg.MirrorFlags()
	for i := 1; i < len(flags); i += 2 {
		m, err := source.ParseMirror(flags[i])
		if err != nil {
			t.Fatal(err)
		}
		mirrors = append(mirrors, m)
	}
	src, err := source.New(source.Options{CacheDir: t.TempDir(), Mirrors: mirrors, Insecure: []string{reg.Host()}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := provenance.LoadPolicy(reg.PolicyFile())
	if err != nil {
		t.Fatal(err)
	}
	v, err := provenance.New(provenance.Options{Policy: p}, src)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestServedSignatures: the registry serves verifiable signatures of its fixtures — a bundle's
// cosign signature naming its tag (the fixture's own noise .sig tag gives way), a payload's
// atomic signature from the signature-store path — and of images pushed at run time;
// SetSigning replaces them.
func TestServedSignatures(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	const bundleRepo = "registry.redhat.io/lvms4/lvms-operator-bundle"
	ctx := context.Background()
	bundleDigest := func(tag string) string {
		ref, err := name.ParseReference(reg.Host() + "/" + bundleRepo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Head(ref)
		if err != nil {
			t.Fatal(err)
		}
		return d.Digest.String()
	}
	tag := func(want string) *provenance.VersionRule {
		return &provenance.VersionRule{Want: "the tag " + want, Accept: func(t string) bool { return t == want }}
	}
	v := sigVerifier(t, reg)
	for _, tg := range []string{"v4.18.4-3", "v4.17.9-10"} {
		rec, err := v.Verify(ctx, provenance.Subject{Role: "bundle", Repository: bundleRepo, Digest: bundleDigest(tg), Version: tag(tg)})
		if err != nil || rec.Signatures[0].Format != provenance.FormatCosign {
			t.Errorf("bundle %s: %+v, %v", tg, rec, err)
		}
	}
	payload := "sha256:c52f79a66c4262962465a7de67364543a073a58f7ea2fbb67c3080c0ca33f8ca" // 4.14.38-x86_64
	rec, err := v.Verify(ctx, provenance.Subject{Role: "payload x86_64", Repository: "quay.io/openshift-release-dev/ocp-release", Digest: payload, Version: tag("4.14.38-x86_64")})
	if err != nil || rec.Signatures[0].Format != provenance.FormatAtomic || rec.Signatures[0].Store != provenance.OfficialStore {
		t.Errorf("payload: %+v, %v", rec, err)
	}

	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(reg.Host() + "/registry.redhat.io/lvms4/pushed:v1")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	h, _ := img.Digest()
	if _, err := v.Verify(ctx, provenance.Subject{Role: "pushed", Repository: "registry.redhat.io/lvms4/pushed", Digest: h.String(), Version: tag("v1")}); err != nil {
		t.Errorf("pushed at run time: %v", err)
	}

	reg.SetSigning(func(repo, digest string, tags []string) testregistry.Signatures {
		if repo == bundleRepo {
			return testregistry.Signatures{Cosign: []testsign.Layer{testsign.Cosign(reg.Keys().Cosign, digest, bundleRepo+":v4.18")}}
		}
		return testregistry.DefaultSigning(reg.Keys())(repo, digest, tags)
	})
	v = sigVerifier(t, reg)
	_, err = v.Verify(ctx, provenance.Subject{Role: "bundle", Repository: bundleRepo, Digest: bundleDigest("v4.18.4-3"), Version: tag("v4.18.4-3")})
	if err == nil || !strings.Contains(err.Error(), "does not name the tag v4.18.4-3") {
		t.Errorf("a floating-tag signature from SetSigning: %v", err)
	}
}

// TestAdoptPushes: a .sig tag pushed at run time is served as it is (a test's forgery) until
// AdoptPushes makes it a fixture, as the bench's pushed fixture set with its unsigned noise
// .sig tag needs; a push after the call is served as it is again.
func TestAdoptPushes(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	const repo = "registry.redhat.io/lvms4/pushed"
	ctx := context.Background()
	pushImage := func(tag string, img v1.Image) string {
		ref, err := name.ParseReference(reg.Host() + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		h, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	push := func(tag string) string {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		return pushImage(tag, img)
	}
	rule := &provenance.VersionRule{Want: "the tag v1", Accept: func(t string) bool { return t == "v1" }}
	verify := func(digest string) error {
		_, err := sigVerifier(t, reg).Verify(ctx, provenance.Subject{Role: "pushed", Repository: repo, Digest: digest, Version: rule})
		return err
	}
	// the fixture set's noise .sig: a simple-signing layer without the signature annotation
	noiseSig := func(digest string) {
		payload := testsign.Payload(testsign.CosignType, digest, repo+":v1")
		img, err := mutate.AppendLayers(empty.Image, static.NewLayer(payload, testsign.CosignLayerType))
		if err != nil {
			t.Fatal(err)
		}
		pushImage(strings.Replace(digest, "sha256:", "sha256-", 1)+".sig", img)
	}

	d := push("v1")
	noiseSig(d) // a random image's layers: no signature annotation
	if err := verify(d); err == nil || !strings.Contains(err.Error(), "annotation is missing or empty") {
		t.Errorf("a pushed unsigned .sig before AdoptPushes: %v, want the missing annotation named", err)
	}
	reg.AdoptPushes()
	if err := verify(d); err != nil {
		t.Errorf("after AdoptPushes: %v", err)
	}
	d2 := push("v1")
	noiseSig(d2)
	if err := verify(d2); err == nil {
		t.Error("a .sig pushed after AdoptPushes verified; want it served as pushed")
	}
}

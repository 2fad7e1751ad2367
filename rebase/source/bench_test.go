package source

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
)

// benchFiller is the incompressible filler per payload, like a real ~150 MB release image.
const benchFiller = 150 << 20

var (
	benchOnce sync.Once
	benchReg  *testRegistry
	benchErr  error
)

// benchRegistry serves the 4.18 fixtures with filler. It lives for the whole test binary:
// building and pushing 300 MB once is the expensive part.
func benchRegistry(b *testing.B) *testRegistry {
	benchOnce.Do(func() {
		set, err := fixtures.Build(fixtures.Options{FillerBytes: benchFiller, Minors: []string{"4.18"}})
		if err != nil {
			benchErr = err
			return
		}
		benchReg = startTestRegistry()
		benchReg.pageSize = 1000
		benchErr = set.Push(context.Background(), benchReg.host())
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchReg
}

// sizes returns the compressed sizes of a fixture image: config, every layer, top layer.
func sizes(b *testing.B, reg *testRegistry, ref string) (cfg, all, top int64) {
	r, err := name.ParseReference(reg.host() + "/" + ref)
	if err != nil {
		b.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		b.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range m.Layers {
		all += l.Size
	}
	return m.Config.Size, all, m.Layers[len(m.Layers)-1].Size
}

// resolveFetch is the source side of a two-arch rebase: resolve, fetch the bundle and both
// payloads' release-manifests.
func resolveFetch(b *testing.B, o Options) *Resolution {
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	c := context.Background()
	res, err := s.Resolve(c, "4.18", "")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.FetchBundle(c, res.Bundle, b.TempDir()); err != nil {
		b.Fatal(err)
	}
	for _, p := range res.Payloads {
		if _, err := s.FetchPayload(c, p, b.TempDir()); err != nil {
			b.Fatal(err)
		}
	}
	return res
}

// BenchmarkResolveFetch resolves 4.18 and fetches the bundle and both arches' payload
// manifests from a loopback registry whose payloads carry 150 MB of filler each. It reports
// blob bytes fetched per run against the minimum (bundle config+layers, per payload config +
// the release-manifests layer) and against whole images (what a full extract would pull).
func BenchmarkResolveFetch(b *testing.B) {
	reg := benchRegistry(b)
	o := Options{
		Mirrors: []Mirror{
			{Source: "registry.redhat.io", Mirror: reg.host() + "/registry.redhat.io"},
			{Source: "quay.io", Mirror: reg.host() + "/quay.io"},
		},
		Logger: testLogger(b),
	}
	b.Setenv("HOME", b.TempDir())
	b.Setenv("REGISTRY_AUTH_FILE", "")
	b.Setenv("DOCKER_CONFIG", b.TempDir())

	o.CacheDir = b.TempDir()
	res := resolveFetch(b, o)
	bcfg, ball, _ := sizes(b, reg, "registry.redhat.io/lvms4/lvms-operator-bundle@"+res.Bundle.Digest)
	minimal, full := bcfg+ball, bcfg+ball
	for _, p := range res.Payloads {
		pcfg, pall, ptop := sizes(b, reg, "quay.io/openshift-release-dev/ocp-release@"+p.Digest)
		minimal += pcfg + ptop
		full += pcfg + pall
	}

	b.Run("cold", func(b *testing.B) {
		var fetched int64
		for i := 0; i < b.N; i++ {
			reg.reset()
			oo := o
			oo.CacheDir = b.TempDir()
			resolveFetch(b, oo)
			fetched += reg.fetchedBlobBytes()
		}
		b.ReportMetric(float64(fetched)/float64(b.N), "fetched-B/op")
		b.ReportMetric(float64(minimal), "minimal-B/op")
		b.ReportMetric(float64(full), "whole-images-B/op")
		b.ReportMetric(float64(fetched)/float64(b.N)/float64(minimal), "fetched/minimal")
	})
	b.Run("warm", func(b *testing.B) {
		oo := o
		oo.CacheDir = b.TempDir()
		resolveFetch(b, oo)
		reg.reset()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resolveFetch(b, oo)
		}
		b.StopTimer()
		b.ReportMetric(float64(reg.fetchedBlobBytes())/float64(b.N), "fetched-B/op")
		b.ReportMetric(float64(reg.blobGETs())/float64(b.N), "blob-GETs/op")
		b.ReportMetric(float64(minimal), "minimal-B/op")
	})
}

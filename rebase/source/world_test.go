package source

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

const (
	bundleRepo  = "registry.redhat.io/lvms4/lvms-operator-bundle"
	releaseRepo = "quay.io/openshift-release-dev/ocp-release"
	operatorRep = "registry.redhat.io/lvms4/lvms-rhel9-operator"
	mustGathRep = "registry.redhat.io/lvms4/lvms-must-gather-rhel9"
)

// world is a registry seeded like the real one: bundle tags that race, 3-arch related
// image lists, payload tags per arch (GA, rc, a -multi list) and canonical hosts as path
// prefixes so --mirror reaches it.
type world struct {
	reg           *testRegistry
	operatorList  string
	operatorChild map[string]string // goarch -> digest
	mustGather    string
	bundles       map[string]string // tag -> digest
	payloads      map[string]string // tag -> digest
	payloadTop    map[string]int64  // tag -> top layer size
	mgChild       map[string]string
}

type worldOpts struct {
	filler int64 // bytes of random base layer per payload
	user   string
	pass   string
}

func csvYAML(version string, related map[string]string) string {
	s := fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: lvms-operator.v%s
  namespace: placeholder
spec:
  version: %s
  install:
    strategy: deployment
    spec:
      deployments:
      - name: lvms-operator
        spec:
          selector: {matchLabels: {app.kubernetes.io/name: lvms-operator}}
          template:
            metadata: {labels: {app.kubernetes.io/name: lvms-operator}}
            spec:
              containers:
              - name: manager
                image: registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:0000000000000000000000000000000000000000000000000000000000000000
  relatedImages:
`, version, version)
	for _, n := range []string{"lvms-operator", "lvms-must-gather"} {
		if img, ok := related[n]; ok {
			s += fmt.Sprintf("  - name: %s\n    image: %s\n", n, img)
		}
	}
	return s
}

func newWorld(t testing.TB, o worldOpts) *world {
	t.Helper()
	reg := newTestRegistry(t)
	reg.user, reg.pass = o.user, o.pass
	w := &world{reg: reg, operatorChild: map[string]string{}, mgChild: map[string]string{}, bundles: map[string]string{}, payloads: map[string]string{}, payloadTop: map[string]int64{}}

	imgs := map[string]v1.Image{}
	for _, a := range []string{"amd64", "arm64", "ppc64le"} {
		imgs[a] = image(t, a, randomLayer(t, 256))
		w.operatorChild[a] = digestOf(t, imgs[a])
	}
	idx := index(t, imgs)
	w.operatorList = digestOf(t, idx)
	reg.pushIndex(t, operatorRep+"@"+w.operatorList, idx)

	mg := map[string]v1.Image{}
	for _, a := range []string{"amd64", "arm64"} {
		mg[a] = image(t, a, randomLayer(t, 128))
		w.mgChild[a] = digestOf(t, mg[a])
	}
	mgIdx := index(t, mg)
	w.mustGather = digestOf(t, mgIdx)
	reg.pushIndex(t, mustGathRep+"@"+w.mustGather, mgIdx)

	related := map[string]string{
		"lvms-operator":    operatorRep + "@" + w.operatorList,
		"lvms-must-gather": mustGathRep + "@" + w.mustGather,
	}
	for tag, version := range map[string]string{
		"v4.18.4": "4.18.4", "v4.18.4-2": "4.18.4", "v4.18.4-10": "4.18.4", "v4.18.3-100": "4.18.3",
		"v4.18.4-1000": "4.18.4", "v4.17.1": "4.17.1", "v4.18": "4.18.4", "latest": "4.18.4",
		"v4.16.2": "4.15.3",
	} {
		base := tarLayer(t, map[string]string{
			"manifests/lvms-operator.clusterserviceversion.yaml": csvYAML(version, related),
			"manifests/stale.yaml":                               "kind: ConfigMap\n",
			"metadata/annotations.yaml":                          "annotations:\n  operators.operatorframework.io.bundle.package.v1: lvms-operator\n",
			"tests/scorecard/config.yaml":                        "kind: Configuration\n",
		})
		top := tarLayer(t, map[string]string{"manifests/.wh.stale.yaml": "", "metadata/tag": tag})
		img := image(t, "amd64", base, top)
		w.bundles[tag] = digestOf(t, img)
		reg.push(t, bundleRepo+":"+tag, img)
	}

	payload := func(version, goarch string, metaVersion string) v1.Image {
		filler := o.filler
		if filler == 0 {
			filler = 4096
		}
		top := tarLayer(t, map[string]string{
			"release-manifests/image-references":                                                    `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"` + version + `"},"spec":{"tags":[]}}`,
			"release-manifests/release-metadata":                                                    `{"kind":"cincinnati-metadata-v0","version":"` + metaVersion + `","previous":[]}`,
			"release-manifests/0000_50_cluster-csi-snapshot-controller-operator_07_deployment.yaml": "kind: Deployment\n",
		}, "release-manifests/image-references", "release-manifests/release-metadata", "release-manifests/0000_50_cluster-csi-snapshot-controller-operator_07_deployment.yaml")
		mid := tarLayer(t, map[string]string{"manifests/0000_00_cvo.yaml": "kind: Namespace\n"})
		return image(t, goarch, randomLayer(t, filler), mid, top)
	}
	arches := map[string]string{"x86_64": "amd64", "aarch64": "arm64"}
	for _, v := range []string{"4.18.5", "4.18.4", "4.18.6-rc.1", "4.17.9"} {
		multi := map[string]v1.Image{}
		for a, ga := range arches {
			meta := v
			if v == "4.17.9" && a == "x86_64" {
				meta = "4.17.8" // a payload that lies about its version
			}
			img := payload(v, ga, meta)
			multi[ga] = img
			tag := v + "-" + a
			w.payloads[tag] = digestOf(t, img)
			reg.push(t, releaseRepo+":"+tag, img)
		}
		if v == "4.18.5" {
			idx := index(t, multi)
			w.payloads[v+"-multi"] = digestOf(t, idx)
			reg.pushIndex(t, releaseRepo+":"+v+"-multi", idx)
		}
	}
	// 4.19.0 exists for x86_64 only.
	img := payload("4.19.0", "amd64", "4.19.0")
	w.payloads["4.19.0-x86_64"] = digestOf(t, img)
	reg.push(t, releaseRepo+":4.19.0-x86_64", img)
	reg.reset()
	return w
}

// mirrors routes the canonical hosts to the loopback registry.
func (w *world) mirrors() []Mirror {
	return []Mirror{
		{Source: "registry.redhat.io", Mirror: w.reg.host() + "/registry.redhat.io"},
		{Source: "quay.io", Mirror: w.reg.host() + "/quay.io"},
	}
}

func (w *world) options(t testing.TB) Options {
	return Options{
		Mirrors:  w.mirrors(),
		CacheDir: t.TempDir(),
		Retry:    RetryOptions{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond},
		Logger:   testLogger(t),
	}
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newSource(t testing.TB, o Options) *Source {
	t.Helper()
	testregistry.NoCredentials(t)
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

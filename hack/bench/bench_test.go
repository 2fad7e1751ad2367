package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
)

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{150 << 20, "150.0 MiB"},
		{3 << 30, "3.0 GiB"},
	} {
		if got := humanBytes(tc.n); got != tc.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestRatioAndTimes(t *testing.T) {
	for _, tc := range []struct {
		a, b  float64
		ratio float64
		times string
	}{
		{10, 0, 0, "-"},
		{0, 5, 0, "-"},
		{3, 2, 1.5, "1.50x"},
		{250, 1, 250, "250x"},
	} {
		r := ratio(tc.a, tc.b)
		if r != tc.ratio || math.IsInf(r, 0) || math.IsNaN(r) {
			t.Errorf("ratio(%v, %v) = %v, want %v", tc.a, tc.b, r, tc.ratio)
		}
		if got := times(r); got != tc.times {
			t.Errorf("times(%v) = %q, want %q", r, got, tc.times)
		}
	}
}

func TestComputeRatios(t *testing.T) {
	r := MinorResult{
		Minimal: Minimal{Parts: []Part{{"bundle", 100}, {"payload x86_64", 300}}},
		Cold:    Measurement{BytesFetched: 800, WallSeconds: 2, PeakRSSKiB: 1000},
		Legacy:  Measurement{BytesFetched: 8000, WallSeconds: 10, PeakRSSKiB: 3000},
	}
	// 5 round trips × 0.2s + 400 B at 0.0032 Mbit/s (1s) = 2s.
	r.computeRatios(0.2, 400*8/1e6)
	want := MinorRatios{
		ColdFetchedOverMinimal:   2,
		LegacyFetchedOverMinimal: 20,
		LegacyOverColdBytes:      10,
		ColdOverLegacyWall:       0.2,
		ColdOverCriticalPath:     1,
		ColdOverStreamedPath:     2 / 1.8,
		LegacyOverColdRSS:        3,
	}
	if r.MinimalBytes != 400 || r.Ratios != want {
		t.Errorf("computeRatios: minimal %d, ratios %+v; want 400, %+v", r.MinimalBytes, r.Ratios, want)
	}
	if cp := r.CriticalPath; cp.RoundTrips != DependentRoundTrips || cp.Bytes != 400 || math.Abs(cp.Seconds-2) > 1e-9 || math.Abs(cp.StreamedSeconds-1.8) > 1e-9 {
		t.Errorf("critical path %+v, want 5 round trips, 400 B, 2s, 1.8s streamed (4 round trips)", cp)
	}
	// A zero cold measurement must not put Inf into result.json.
	z := MinorResult{Legacy: Measurement{BytesFetched: 1}}
	z.computeRatios(0, 0)
	if _, err := json.Marshal(z); err != nil {
		t.Errorf("marshal with zero denominators: %v", err)
	}
}

func TestTransferSeconds(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		mbps float64
		want float64
	}{
		{100e6 / 8, 100, 1},
		{300 << 20, 100, 25.165824},
		{1 << 20, 0, 0},
	} {
		if got := transferSeconds(tc.n, tc.mbps); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("transferSeconds(%d, %v) = %v, want %v", tc.n, tc.mbps, got, tc.want)
		}
	}
}

func TestRefHelpers(t *testing.T) {
	// repository stripping is tested where it lives: rebase/source TestRepository.
	if got := mirrorRef("127.0.0.1:5000", "quay.io/a/b@sha256:1"); got != "127.0.0.1:5000/quay.io/a/b@sha256:1" {
		t.Errorf("mirrorRef = %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"sha256:aa", "sha256:aa"},
		{"registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:bb", "sha256:bb"},
	} {
		if got := archDigest(tc.in); got != tc.want {
			t.Errorf("archDigest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRelatedRef(t *testing.T) {
	for _, tc := range []struct {
		name string
		im   lock.ImageDigests
		want string
	}{
		{"list", lock.ImageDigests{Repository: "r.io/a", ListDigest: "sha256:list", Arch: map[string]string{"x86_64": "sha256:x"}}, "r.io/a@sha256:list"},
		{"single arch, digest ref values", lock.ImageDigests{Repository: "r.io/a", Arch: map[string]string{"x86_64": "r.io/a@sha256:x", "aarch64": "r.io/a@sha256:y"}}, "r.io/a@sha256:y"},
		{"nothing", lock.ImageDigests{Repository: "r.io/a"}, "r.io/a"},
	} {
		if got := relatedRef(tc.im); got != tc.want {
			t.Errorf("%s: relatedRef = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestChildSize(t *testing.T) {
	h := func(s string) v1.Hash {
		x, err := v1.NewHash("sha256:" + strings.Repeat(s, 64))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	idx := &v1.IndexManifest{Manifests: []v1.Descriptor{{Digest: h("a"), Size: 10}, {Digest: h("b"), Size: 20}}}
	if n, ok := childSize(idx, h("b").String()); !ok || n != 20 {
		t.Errorf("childSize(b) = %d, %v; want 20, true", n, ok)
	}
	if _, ok := childSize(idx, h("c").String()); ok {
		t.Error("childSize(c) found a child that is not there")
	}
}

func TestSplitListAndFixtureMinors(t *testing.T) {
	if got := splitList(" 4.18, ,4.17,4.18"); !reflect.DeepEqual(got, []string{"4.18", "4.17"}) {
		t.Errorf("splitList = %q", got)
	}
	got, err := fixtureMinors([]string{"4.18", "4.17"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"4.18", "4.17"}) {
		t.Errorf("fixtureMinors(4.18, 4.17) = %q", got)
	}
	// MicroShift 4.16 ships the 4.15 bundle, so its fixtures need both minors.
	got, err = fixtureMinors([]string{"4.16"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"4.16", "4.15"}) {
		t.Errorf("fixtureMinors(4.16) = %q, want [4.16 4.15]", got)
	}
	if _, err := fixtureMinors([]string{"3.11"}); err == nil {
		t.Error("fixtureMinors(3.11) succeeded; want an unknown-era error")
	}
}

func TestCountDocs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"apiVersion: v1\nkind: A\n", 1},
		{"a: 1\n---\nb: 2\n---\nc: 3\n", 3},
		{"---\na: 1\n---\n", 1},
	} {
		if got := countDocs(tc.in); got != tc.want {
			t.Errorf("countDocs(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseRebaseOutput(t *testing.T) {
	cold := `{"ocp":"4.18","payloadVersion":"4.18.4","bundleVersion":"v4.18.4-3",
	  "plan":{"add":["a","b"],"change":["c"]},"phases":[{"name":"resolve","duration":"1.5s"}]}`
	out, err := parseRebaseOutput([]byte(cold))
	if err != nil {
		t.Fatal(err)
	}
	if out.changed() != 3 || out.PayloadVersion != "4.18.4" || out.BundleVersion != "v4.18.4-3" {
		t.Errorf("parsed %+v, changed %d", out, out.changed())
	}
	if got := out.phases(); !reflect.DeepEqual(got, []PhaseTime{{"resolve", 1.5}}) {
		t.Errorf("phases = %+v", got)
	}
	warm, err := parseRebaseOutput([]byte(`{"plan":{"unchanged":["a"]}}`))
	if err != nil || warm.changed() != 0 {
		t.Errorf("warm: %v, changed %d", err, warm.changed())
	}
	for _, bad := range []string{`{}`, `not json`} {
		if _, err := parseRebaseOutput([]byte(bad)); err == nil {
			t.Errorf("parseRebaseOutput(%q) succeeded", bad)
		}
	}
}

func TestCopyTreeAndCountYAML(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"assets/components/lvms/a.yaml":                    "a",
		"assets/components/lvms/b.yaml":                    "b",
		"assets/components/csi-snapshot-controller/c.yaml": "c",
		"assets/components/lvms/README.md":                 "not counted",
		"assets/release/release-x86_64.json":               "{}",
	}
	for p, c := range files {
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		got, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(p)))
		if err != nil || string(got) != c {
			t.Errorf("copy of %s = %q, %v; want %q", p, got, err, c)
		}
	}
	if n := countYAML(dst); n != 3 {
		t.Errorf("countYAML = %d, want 3", n)
	}
}

func TestWriteTable(t *testing.T) {
	r := &Report{Go: "go1.26 linux/amd64", CPUs: 2, FillerBytes: 150 << 20, Kubectl: "absent", BuildSeconds: 1, PushSeconds: 2,
		LinkMbps: 100, DelaySeconds: 0.04, Binary: "lvms-rebase v1"}
	m := MinorResult{
		OCP: "4.18", PayloadVersion: "4.18.4", Bundle: "v4.18.4-3", Files: 30,
		Minimal: Minimal{Parts: []Part{{"bundle", 2048}, {"payload x86_64", 4096}}},
		Cold:    Measurement{Name: "lvms-rebase cold", WallSeconds: 1.25, BytesFetched: 8192, BlobGETs: 7, PeakRSSKiB: 51200},
		Warm:    Measurement{Name: "lvms-rebase warm", WallSeconds: 0.5},
		Legacy:  Measurement{Name: "legacy-shaped", WallSeconds: 5, BytesFetched: 300 << 20, Phases: []PhaseTime{{"export payloads", 4}, {"translate", 0.00022}, {"none", 0}}},
		Notes:   []string{"kubectl not found"},
	}
	m.computeRatios(r.DelaySeconds, r.LinkMbps)
	r.Minors = append(r.Minors, m)
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"lvms-rebase bench (lvms-rebase v1): x86_64 + aarch64, 150.0 MiB of filler per payload",
		"network model on loopback: 0.04s per request, 100 Mbit/s shared link",
		"OCP 4.18: payload 4.18.4, bundle v4.18.4-3, 30 files written",
		"lvms-rebase cold",
		"8.0 KiB",
		"1.33x", // 8192 / 6144
		"50.0 MiB",
		"minimal bytes needed: 6.0 KiB (6144 B) = bundle 2.0 KiB, payload x86_64 4.0 KiB",
		// 5 × 0.04 + 6144 × 8 / 100e6 = 0.20049s
		"critical-path estimate: 5 dependent round trips (ping, tag list, manifest, config + top layer, snapshot files) x 0.04s + 6.0 KiB / 100 Mbit/s = 0.20s",
		// 4 × 0.04 + 0.00049 = 0.16049s; 1.25 / 0.16049 = 7.79
		"streamed bound: 4 round trips (the snapshot files overlap the top layer, whose first file names their commit) = 0.16s; cold wall / streamed bound 7.79x",
		"cold wall / legacy 0.25x (<= 0.25x), cold wall / critical path 6.23x (<= 1.3x), warm blob GETs 0 (= 0), warm signature requests 0 (= 0)",
		"legacy-shaped / lvms-rebase cold: bytes 38400x",
		"legacy-shaped phases: export payloads 4.00s, translate 220µs, none 0.00s",
		"note: kubectl not found",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestBytesByKind(t *testing.T) {
	s := testregistry.Stats{Paths: []testregistry.PathStats{
		{Method: "GET", Path: "/v2/quay.io/a/blobs/sha256:1", Requests: 1, Bytes: 100},
		{Method: "GET", Path: "/v2/quay.io/a/blobs/sha256:2", Requests: 1, Bytes: 50},
		{Method: "GET", Path: "/v2/quay.io/a/manifests/sha256:3", Requests: 2, Bytes: 7},
		{Method: "GET", Path: "/v2/quay.io/a/tags/list", Requests: 1, Bytes: 3},
		{Method: "GET", Path: testregistry.SnapshotArchivePrefix + "abc.tar.gz", Requests: 1, Bytes: 9},
		{Method: "GET", Path: testregistry.RawFilePrefix + "abc/assets/x.yaml", Requests: 2, Bytes: 5},
		{Method: "GET", Path: "/v2/", Requests: 4, Bytes: 2},
	}}
	want := []Part{{"blobs", 150}, {"manifests", 7}, {"tag lists", 3}, {"snapshot archives", 9}, {"snapshot files", 5}, {"other", 2}}
	if got := bytesByKind(s); !reflect.DeepEqual(got, want) {
		t.Errorf("bytesByKind = %+v, want %+v", got, want)
	}
	if got := bytesByKind(testregistry.Stats{}); len(got) != 0 {
		t.Errorf("bytesByKind(empty) = %+v", got)
	}
}

package release

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

func read(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// eraImages builds a value for every release key of an era, distinct per era and arch.
func eraImages(e era.Era, arch string) map[string]string {
	out := map[string]string{}
	for _, k := range e.ReleaseKeys() {
		out[k] = fmt.Sprintf("example.io/%s@sha256:%064x", k, len(k)*31+len(e.Name)+len(arch))
	}
	return out
}

func TestMergeGolden(t *testing.T) {
	inputs := []struct{ file, arch string }{
		{"release-4.16-x86_64.json", "x86_64"},
		{"release-4.18-aarch64.json", "aarch64"},
	}
	for _, e := range era.Table() {
		for _, in := range inputs {
			name := fmt.Sprintf("%s-from-%s", e.Name, strings.TrimSuffix(in.file, ".json"))
			t.Run(name, func(t *testing.T) {
				data := read(t, in.file)
				imgs := eraImages(e, in.arch)
				got, ch, err := Merge(data, e, imgs)
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "golden", name+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs:\n%s", golden, got)
				}
				before, _ := Read(data)
				after, err := Read(got)
				if err != nil {
					t.Fatal(err)
				}
				if after.Base != before.Base {
					t.Errorf("release.base changed: %q → %q", before.Base, after.Base)
				}
				storage := map[string]bool{}
				for _, k := range era.StorageKeys {
					storage[k] = true
				}
				for _, k := range before.Keys {
					if !storage[k] && after.Images[k] != before.Images[k] {
						t.Errorf("non-storage key %s changed", k)
					}
				}
				for _, k := range era.StorageKeys {
					_, has := after.Images[k]
					if _, want := imgs[k]; want != has {
						t.Errorf("storage key %s present=%v, want %v", k, has, want)
					}
				}
				for k, v := range imgs {
					if after.Images[k] != v {
						t.Errorf("key %s = %q, want %q", k, after.Images[k], v)
					}
				}
				// Applying the same merge again is a no-op, byte for byte.
				again, ch2, err := Merge(got, e, imgs)
				if err != nil || !bytes.Equal(again, got) || !ch2.Empty() {
					t.Errorf("second merge changed the file: %v %+v", err, ch2)
				}
				if ch.Empty() {
					t.Errorf("no change reported")
				}
			})
		}
	}
}

func TestMergeChange(t *testing.T) {
	data := read(t, "release-4.16-x86_64.json")
	e, err := era.For("4.18")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Read(data)
	imgs := map[string]string{
		"lvms_operator":           "registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:" + strings.Repeat("a", 64),
		"csi-snapshot-controller": before.Images["csi-snapshot-controller"],
	}
	got, ch, err := Merge(data, e, imgs)
	if err != nil {
		t.Fatal(err)
	}
	want := &Change{
		Added: []string{"lvms_operator"},
		Removed: []string{"topolvm_csi", "topolvm_csi_registrar", "topolvm_csi_livenessprobe", "topolvm_csi_resizer",
			"topolvm_csi_provisioner", "csi-external-snapshotter", "csi-snapshot-validation-webhook"},
	}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("change (-want +got):\n%s", diff)
	}
	after, _ := Read(got)
	wantKeys := []string{"cli", "coredns", "haproxy-router", "kube-rbac-proxy", "openssl", "ovn-kubernetes-microshift", "pod",
		"service-ca-operator", "csi-snapshot-controller", "lvms_operator"}
	if diff := cmp.Diff(wantKeys, after.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	// Updating one value changes exactly one line.
	imgs["csi-snapshot-controller"] = "quay.io/x@sha256:" + strings.Repeat("b", 64)
	got2, ch2, err := Merge(got, e, imgs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Change{Updated: []string{"csi-snapshot-controller"}}, ch2); diff != "" {
		t.Errorf("change (-want +got):\n%s", diff)
	}
	a, b := strings.Split(string(got), "\n"), strings.Split(string(got2), "\n")
	diff := 0
	for i := range a {
		if a[i] != b[i] {
			diff++
		}
	}
	if len(a) != len(b) || diff != 1 {
		t.Errorf("%d lines differ (lengths %d/%d), want 1", diff, len(a), len(b))
	}
}

func TestMergeKeepsUnusualValues(t *testing.T) {
	in := "{\n  \"release\": {\n    \"base\": \"4.18.0\",\n    \"extra\": [\n      1,\n      \"\\u003cx\\u003e\"\n    ]\n  },\n  \"images\": {\n    \"a<b>\": \"x&y\"\n  },\n  \"other\": null\n}\n"
	e, _ := era.For("4.18")
	out, _, err := Merge([]byte(in), e, eraImages(e, "x86_64"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), in[:strings.Index(in, "\n  },\n  \"other\"")-len("\n    \"a<b>\": \"x&y\"")]) {
		t.Errorf("prefix changed:\n%s", out)
	}
	if !strings.HasSuffix(string(out), "  },\n  \"other\": null\n}\n") || !strings.Contains(string(out), `"a<b>": "x&y",`) {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestMergeErrors(t *testing.T) {
	e, _ := era.For("4.17")
	good := eraImages(e, "x86_64")
	data := read(t, "release-4.18-aarch64.json")
	tests := []struct {
		name   string
		data   string
		images map[string]string
		want   string
	}{
		{"not json", "{", good, "decoding top level"},
		{"array", "[]", good, "decoding top level: expected an object"},
		{"trailing", string(data) + "{}", good, "unexpected data after the object"},
		{"no images", `{"release":{"base":"x"}}`, good, "field images is missing"},
		{"no release", `{"images":{}}`, good, "field release is missing"},
		{"no base", `{"release":{},"images":{}}`, good, "field release.base is missing"},
		{"image not string", `{"release":{"base":"x"},"images":{"a":1}}`, good, "field images.a: expected a string"},
		{"duplicate key", `{"release":{"base":"x"},"images":{"a":"1","a":"2"}}`, good, `decoding images: duplicate key "a"`},
		{"missing image", string(data), map[string]string{"lvms_operator": "x"}, "era lvms-4.17: no image given for release key(s) csi-snapshot-controller, csi-snapshot-validation-webhook"},
		{"foreign key", string(data), func() map[string]string {
			m := eraImages(e, "x86_64")
			m["openssl"] = "x"
			return m
		}(), "era lvms-4.17: image key(s) openssl are not release keys of the era"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Merge([]byte(tc.data), e, tc.images)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzMerge checks Merge never panics and that its output parses, keeps release.base and
// non-storage keys, and is a fixed point.
func FuzzMerge(f *testing.F) {
	f.Add(read(f, "release-4.16-x86_64.json"))
	f.Add(read(f, "release-4.18-aarch64.json"))
	f.Add([]byte(`{"release":{"base":"x"},"images":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		before, err := Read(data)
		for _, e := range era.Table() {
			imgs := eraImages(e, "x86_64")
			out, _, merr := Merge(data, e, imgs)
			if (err == nil) != (merr == nil) {
				t.Fatalf("Read error %v but Merge error %v", err, merr)
			}
			if merr != nil {
				continue
			}
			after, err := Read(out)
			if err != nil {
				t.Fatalf("output does not parse: %v\n%s", err, out)
			}
			if after.Base != before.Base {
				t.Fatalf("base changed")
			}
			for k, v := range imgs {
				if after.Images[k] != v {
					t.Fatalf("key %s not set", k)
				}
			}
			again, ch, err := Merge(out, e, imgs)
			if err != nil || !bytes.Equal(again, out) || !ch.Empty() {
				t.Fatalf("not a fixed point: %v %+v", err, ch)
			}
		}
	})
}

func TestMergeUnchangedIsByteIdentical(t *testing.T) {
	for _, c := range []struct{ file, ocp string }{{"release-4.16-x86_64.json", "4.16"}, {"release-4.18-aarch64.json", "4.18"}} {
		data := read(t, c.file)
		f, err := Read(data)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := era.For(c.ocp)
		imgs := map[string]string{}
		for _, k := range e.ReleaseKeys() {
			imgs[k] = f.Images[k]
		}
		out, ch, err := Merge(data, e, imgs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) || !ch.Empty() {
			t.Errorf("%s: unchanged merge rewrote the file (change %+v):\n%s", c.file, ch, out)
		}
	}
}

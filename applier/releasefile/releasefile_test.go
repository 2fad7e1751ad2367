package releasefile

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestPaths(t *testing.T) {
	if got := FileName("aarch64"); got != "release-aarch64.json" {
		t.Errorf("FileName = %q", got)
	}
	if got := RepoPath("x86_64"); got != "assets/release/release-x86_64.json" {
		t.Errorf("RepoPath = %q", got)
	}
	for p, want := range map[string]string{
		RepoPath("x86_64"):                      "x86_64",
		RepoPath("aarch64"):                     "aarch64",
		"assets/release/release-.json":          "",
		"assets/release/kustomization.yaml":     "",
		"assets/components/release-x86_64.json": "",
		"assets/release/release-x/y.json":       "",
	} {
		got, ok := ArchOf(p)
		if got != want || ok != (want != "") {
			t.Errorf("ArchOf(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
	if got := TemplateKey("topolvm-csi-node_x"); got != "topolvm_csi_node_x" {
		t.Errorf("TemplateKey = %q", got)
	}
	if got := Placeholder("topolvm-csi"); got != "{{ .ReleaseImage.topolvm_csi }}" {
		t.Errorf("Placeholder = %q", got)
	}
	if got := RepoDir + "/" + FileName("x"); got != RepoPath("x") {
		t.Errorf("RepoDir %q and RepoPath %q disagree", RepoDir, RepoPath("x"))
	}
}

func TestParse(t *testing.T) {
	f, err := Parse([]byte(`{"release": {"base": "4.18.0"}, "images": {"b-x": "B", "a": "A"}, "other": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Base != "4.18.0" || strings.Join(f.Keys, ",") != "b-x,a" || f.Images["b-x"] != "B" || len(f.Top) != 3 || len(f.ImageMembers) != 2 {
		t.Errorf("Parse = %+v", f)
	}
	for in, want := range map[string]string{
		`[]`:                                     "decoding top level: expected an object",
		`{"images": {}}`:                         "field release is missing",
		`{"release": {"base": "b"}}`:             "field images is missing",
		`{"release": {}, "images": {}}`:          "field release.base is missing",
		`{"release": {"base": 1}, "images": {}}`: "field release: expected an object with a string base",
		`{"release": {"base": "b"}, "images": {"a": 1}}`:             "field images.a: expected a string",
		`{"release": {"base": "b"}, "images": {"a": "1", "a": "2"}}`: `decoding images: duplicate key "a"`,
		`{"release": {"base": "b"}, "images": {}} {}`:                "unexpected data after the object",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s): %v, want %q", in, err, want)
		}
	}
}

// Read finds the arch's file, names it in errors, and TemplateImages keys the images as the
// templates use them.
func TestReadTemplateImages(t *testing.T) {
	fsys := fstest.MapFS{
		"release-x86_64.json": {Data: []byte(`{"release":{"base":"4.16.0"},"images":{"csi-snapshot-controller":"c","topolvm_csi":"t","haproxy-router":"h"}}`)},
		"release-broken.json": {Data: []byte(`{"release":{}}`)},
		"release-clash.json":  {Data: []byte(`{"release":{"base":"b"},"images":{"a-b":"1","a_b":"2"}}`)},
		"release-same.json":   {Data: []byte(`{"release":{"base":"b"},"images":{"a-b":"1","a_b":"1"}}`)},
		"release-empty.json":  {Data: []byte(`{"release":{"base":"b"},"images":{}}`)},
	}
	f, err := Read(fsys, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := f.TemplateImages()
	if err != nil || f.Base != "4.16.0" || len(imgs) != 3 || imgs["csi_snapshot_controller"] != "c" || imgs["topolvm_csi"] != "t" || imgs["haproxy_router"] != "h" {
		t.Errorf("x86_64: base %q images %v %v", f.Base, imgs, err)
	}
	if f, err := Read(fsys, "same"); err != nil {
		t.Error(err)
	} else if imgs, err := f.TemplateImages(); err != nil || len(imgs) != 1 {
		t.Errorf("same image under both spellings: %v %v", imgs, err)
	}
	for _, c := range []struct{ arch, want string }{
		{"s390x", "reading release file release-s390x.json for arch s390x"},
		{"", `architecture "": expected`},
		{"../x", `architecture "../x"`},
		{"broken", "release-broken.json: field release.base is missing"},
	} {
		if _, err := Read(fsys, c.arch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q) error %v, want %q", c.arch, err, c.want)
		}
	}
	for arch, want := range map[string]string{
		"clash": "images keys differing only in '-'/'_' map to a_b with different images",
		"empty": "images: expected a non-empty object of pull specs",
	} {
		f, err := Read(fsys, arch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.TemplateImages(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: TemplateImages error %v, want %q", arch, err, want)
		}
	}
}

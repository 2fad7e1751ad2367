package payload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/gitcommit"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

func mustEra(t *testing.T, ocp string) era.Era {
	t.Helper()
	e, err := era.For(ocp)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLoadAndImages(t *testing.T) {
	const art = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
	tests := []struct {
		name       string
		dir        string
		ocp        string
		wantVer    string
		wantCommit string
		wantKeys   []string
		wantErr    string
	}{
		{name: "topolvm era takes snapshotter too", dir: "4.16.9", ocp: "4.16", wantVer: "4.16.9",
			wantCommit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
			wantKeys:   []string{"csi-external-snapshotter", "csi-snapshot-controller", "csi-snapshot-validation-webhook"}},
		{name: "4.17 keeps webhook", dir: "4.16.9", ocp: "4.17", wantVer: "4.16.9",
			wantCommit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
			wantKeys:   []string{"csi-snapshot-controller", "csi-snapshot-validation-webhook"}},
		{name: "4.19 controller only", dir: "4.19.2", ocp: "4.19", wantVer: "4.19.2",
			wantCommit: "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567",
			wantKeys:   []string{"csi-snapshot-controller"}},
		{name: "4.17 era on a payload without webhook", dir: "4.19.2", ocp: "4.17", wantVer: "4.19.2",
			wantCommit: "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567",
			wantErr:    "payload 4.19.2: image-references lacks tag(s) csi-snapshot-validation-webhook required by era lvms-4.17"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Load(filepath.Join("testdata", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			if p.Version() != tc.wantVer {
				t.Errorf("Version() = %q, want %q", p.Version(), tc.wantVer)
			}
			c, err := p.SnapshotOperatorCommit()
			if err != nil || c != tc.wantCommit {
				t.Errorf("SnapshotOperatorCommit() = %q, %v; want %q", c, err, tc.wantCommit)
			}
			imgs, err := p.Images(mustEra(t, tc.ocp))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Images() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range mustEra(t, tc.ocp).PayloadImages {
				keys = append(keys, k.Key)
				if !strings.HasPrefix(imgs[k.Key], art) {
					t.Errorf("image %s = %q, want an %s… digest ref", k.Key, imgs[k.Key], art)
				}
				if ref, _ := p.Image(k.Name); ref != imgs[k.Key] {
					t.Errorf("Image(%s) = %q, Images()[%s] = %q", k.Name, ref, k.Key, imgs[k.Key])
				}
			}
			if !reflect.DeepEqual(keys, tc.wantKeys) || len(imgs) != len(tc.wantKeys) {
				t.Errorf("keys = %v (map %v), want %v", keys, imgs, tc.wantKeys)
			}
		})
	}
}

func TestImageMissing(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "4.19.2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Image("csi-snapshot-validation-webhook"); ok {
		t.Error("Image() found a tag the payload lacks")
	}
}

func TestParseImageReferencesErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not json", `{`, "decoding image-references: expected ImageStream JSON"},
		{"wrong kind", `{"kind":"List"}`, `image-references: kind is "List", expected ImageStream`},
		{"tag without name", `{"kind":"ImageStream","spec":{"tags":[{"from":{"kind":"DockerImage","name":"x"}}]}}`, "spec.tags[0].name is empty"},
		{"tag without from", `{"kind":"ImageStream","spec":{"tags":[{"name":"a"}]}}`, "spec.tags[0] (a): from.name is empty"},
		{"tag wrong from kind", `{"kind":"ImageStream","spec":{"tags":[{"name":"a","from":{"kind":"ImageStreamTag","name":"x"}}]}}`, `spec.tags[0] (a): from.kind is "ImageStreamTag"`},
		{"duplicate tag", `{"kind":"ImageStream","spec":{"tags":[{"name":"a","from":{"kind":"DockerImage","name":"x"}},{"name":"a","from":{"kind":"DockerImage","name":"y"}}]}}`, `spec.tags[1]: duplicate tag "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseImageReferences([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseMetadataErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not json", `[`, "decoding release-metadata"},
		{"wrong kind", `{"kind":"x","version":"4.1.0"}`, `release-metadata: kind is "x", expected cincinnati-metadata-v0`},
		{"no version", `{"kind":"cincinnati-metadata-v0"}`, "release-metadata: version is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMetadata([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "4.19.2", ImageReferencesFile))
	if err != nil {
		t.Fatal(err)
	}
	noCommit := strings.Replace(string(good), `"io.openshift.build.commit.id": "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567"`, `"io.openshift.build.commit.id": ""`, 1)
	badCommit := strings.Replace(string(good), `"io.openshift.build.commit.id": "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567"`, `"io.openshift.build.commit.id": "../../etc"`, 1)
	noOperator := strings.Replace(string(good), `"name": "cluster-csi-snapshot-controller-operator"`, `"name": "renamed"`, 1)
	meta := `{"kind":"cincinnati-metadata-v0","version":"4.19.2","previous":[]}`
	tests := []struct {
		name       string
		files      map[string]string
		wantLoad   string
		wantCommit string
	}{
		{name: "no image-references", files: map[string]string{ReleaseMetadataFile: meta}, wantLoad: "image-references"},
		{name: "no release-metadata", files: map[string]string{ImageReferencesFile: string(good)}, wantLoad: "release-metadata"},
		{name: "bad release-metadata", files: map[string]string{ImageReferencesFile: string(good), ReleaseMetadataFile: "{}"}, wantLoad: "release-metadata: kind"},
		{name: "no commit annotation", files: map[string]string{ImageReferencesFile: noCommit, ReleaseMetadataFile: meta},
			wantCommit: `payload 4.19.2: image-references tag "cluster-csi-snapshot-controller-operator" has no io.openshift.build.commit.id annotation`},
		{name: "commit not hex", files: map[string]string{ImageReferencesFile: badCommit, ReleaseMetadataFile: meta},
			wantCommit: `"../../etc" is not a hex commit id`},
		{name: "no operator tag", files: map[string]string{ImageReferencesFile: noOperator, ReleaseMetadataFile: meta},
			wantCommit: `payload 4.19.2: image-references has no tag "cluster-csi-snapshot-controller-operator"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Load(dir)
			if tc.wantLoad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantLoad) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Load error = %v, want %q naming %s", err, tc.wantLoad, dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.SnapshotOperatorCommit()
			if err == nil || !strings.Contains(err.Error(), tc.wantCommit) {
				t.Fatalf("SnapshotOperatorCommit error = %v, want %q", err, tc.wantCommit)
			}
		})
	}
}

// FuzzParseImageReferences checks the parser never panics and that what it accepts is
// consistent with the lookup API.
func FuzzParseImageReferences(f *testing.F) {
	for _, d := range []string{"4.16.9", "4.19.2"} {
		data, err := os.ReadFile(filepath.Join("testdata", d, ImageReferencesFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"ImageStream","spec":{"tags":[{"name":"a","from":{"kind":"DockerImage","name":"x"}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		is, err := ParseImageReferences(data)
		if err != nil {
			return
		}
		p := New(is, &Metadata{Kind: "cincinnati-metadata-v0", Version: "0.0.0"})
		for _, tag := range is.Spec.Tags {
			ref, ok := p.Image(tag.Name)
			if !ok || ref == "" || ref != tag.From.Name {
				t.Fatalf("Image(%q) = %q, %v; want %q", tag.Name, ref, ok, tag.From.Name)
			}
		}
		if c, err := p.SnapshotOperatorCommit(); err == nil && !gitcommit.Valid(c) {
			t.Fatalf("accepted commit %q", c)
		}
	})
}

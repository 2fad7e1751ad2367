package lock

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/lock.golden.yaml")

// d makes a fake digest from one hex character.
func d(c string) string { return "sha256:" + strings.Repeat(c, 64) }

// sample is a lock as a 4.18 rebase would write it, with lists deliberately unsorted.
func sample() *Lock {
	l := New()
	l.ToolVersion = "v0.1.0"
	l.OCP = "4.18"
	l.Era = "lvms-4.18"
	l.PayloadVersion = "4.18.12"
	l.Bundle = Image{
		Ref:     "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4",
		Version: "v4.18.4",
		Digest:  d("1"),
		Arch:    map[string]string{"x86_64": d("2"), "aarch64": d("3")},
	}
	l.Payloads = []Payload{
		{Arch: "x86_64", Ref: "quay.io/openshift-release-dev/ocp-release:4.18.12-x86_64", Digest: d("4"), Version: "4.18.12"},
		{Arch: "aarch64", Ref: "quay.io/openshift-release-dev/ocp-release:4.18.12-aarch64", Digest: d("5"), Version: "4.18.12"},
	}
	l.SnapshotAssets = SnapshotAssets{
		Source: "https://github.com/openshift/cluster-csi-snapshot-controller-operator",
		Commit: "0123456789abcdef0123456789abcdef01234567",
		SHA256: d("6"),
		Files: []File{
			{Path: "manifests/05_operand_rbac.yaml", SHA256: strings.Repeat("c", 64)},
			{Path: "assets/csi_controller_deployment.yaml", SHA256: strings.Repeat("d", 64)},
		},
	}
	l.Images = []ImageDigests{
		{Key: "lvms_operator", Name: "lvms-operator", From: "bundle", Repository: "registry.redhat.io/lvms4/lvms-rhel9-operator",
			ListDigest: d("7"), Arch: map[string]string{"x86_64": d("8"), "aarch64": d("9")}},
		{Key: "csi-snapshot-controller", Name: "csi-snapshot-controller", From: "payload",
			Repository: "quay.io/openshift-release-dev/ocp-v4.0-art-dev",
			Arch:       map[string]string{"x86_64": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + d("a"), "aarch64": d("b")}},
	}
	l.SetFiles(map[string][]byte{
		"assets/release/release-x86_64.json":                         []byte("{}\n"),
		"assets/components/lvms/lvms_default-lvmcluster.yaml":        []byte("kind: LVMCluster\n"),
		"assets/components/csi-snapshot-controller/clusterrole.yaml": []byte("kind: ClusterRole\n"),
		Path: []byte("ignored: the lock itself\n"),
	})
	return l
}

func TestGoldenRoundTrip(t *testing.T) {
	b, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "lock.golden.yaml")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("Marshal differs from golden:\n%s\n--- want\n%s", b, want)
	}
	l, err := Read(golden)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatalf("Read+Marshal is not the identity:\n%s", again)
	}
	s := sample()
	s.sort()
	if diff := cmp.Diff(s, l); diff != "" {
		t.Fatalf("Read (-want +got):\n%s", diff)
	}
	if len(l.Files) != 3 {
		t.Errorf("files = %v, want 3 without the lock itself", l.Files)
	}
	if img, ok := l.ImageByKey("lvms_operator"); !ok || img.Arch["aarch64"] != d("9") {
		t.Errorf("ImageByKey(lvms_operator) = %+v, %v", img, ok)
	}
	if _, ok := l.ImageByKey("nope"); ok {
		t.Error("ImageByKey(nope) found")
	}
}

// TestDeterministic: the same content built in another order gives the same bytes.
func TestDeterministic(t *testing.T) {
	a, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l := sample()
	for i, j := 0, len(l.Images)-1; i < j; i, j = i+1, j-1 {
		l.Images[i], l.Images[j] = l.Images[j], l.Images[i]
	}
	for i, j := 0, len(l.Files)-1; i < j; i, j = i+1, j-1 {
		l.Files[i], l.Files[j] = l.Files[j], l.Files[i]
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("not deterministic:\n%s\n---\n%s", a, b)
	}
}

func TestReadStrict(t *testing.T) {
	good, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, data, wantErr string
	}{
		{"unknown top-level field", string(good) + "extra: 1\n", `unknown field "extra"`},
		{"unknown nested field", strings.Replace(string(good), "  commit:", "  comit: x\n  commit:", 1), `unknown field "comit"`},
		{"unknown nested field names its path", strings.Replace(string(good), "  commit:", "  comit: x\n  commit:", 1), `snapshotAssets.comit: unknown field "comit"`},
		{"field names are case-sensitive", strings.Replace(string(good), "toolVersion:", "ToolVersion:", 1), `ToolVersion: unknown field "ToolVersion"`},
		{"duplicate field", string(good) + "ocp: \"4.19\"\n", `"ocp" already set`},
		{"wrong kind", strings.Replace(string(good), "kind: RebaseLock", "kind: Other", 1), "expected " + APIVersion + "/" + Kind},
		{"bad digest", strings.Replace(string(good), d("4"), "sha256:abc", 1), "payloads[1].digest"},
		{"not yaml", "{", "parsing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "lvms-rebase.lock.yaml")
			if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want one naming %s and containing %q", err, p, tc.wantErr)
			}
		})
	}
	if _, err := Read(filepath.Join(t.TempDir(), "absent.yaml")); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(l *Lock)
		wantErr string
	}{
		{"ok", func(l *Lock) {}, ""},
		{"ok without optional fields", func(l *Lock) {
			l.Images[0].From, l.Images[0].Repository, l.Images[0].Name, l.Images[0].ListDigest = "", "", "", ""
			l.SnapshotAssets.Source, l.SnapshotAssets.SHA256, l.Bundle.Arch = "", "", nil
		}, ""},
		{"no tool version", func(l *Lock) { l.ToolVersion = "" }, "toolVersion: required"},
		{"bad ocp", func(l *Lock) { l.OCP = "4.18.1" }, `ocp: "4.18.1"`},
		{"no era", func(l *Lock) { l.Era = "" }, "era: required"},
		{"no bundle digest", func(l *Lock) { l.Bundle.Digest = "" }, "bundle.digest: required"},
		{"bundle arch unknown", func(l *Lock) { l.Bundle.Arch["amd64"] = d("c") }, `arch "amd64"`},
		{"no payload", func(l *Lock) { l.Payloads = nil }, "payloads: at least one"},
		{"payload arch twice", func(l *Lock) { l.Payloads[0].Arch = l.Payloads[1].Arch }, "listed twice"},
		{"payload without ref", func(l *Lock) { l.Payloads[0].Ref = "" }, ".ref: required"},
		{"no snapshot commit", func(l *Lock) { l.SnapshotAssets.Commit = "" }, "snapshotAssets.commit: required"},
		{"bad snapshot sum", func(l *Lock) { l.SnapshotAssets.SHA256 = "abc" }, "snapshotAssets.sha256"},
		{"bare hex snapshot sum", func(l *Lock) { l.SnapshotAssets.SHA256 = strings.Repeat("e", 64) }, ""},
		{"snapshot file escapes", func(l *Lock) { l.SnapshotAssets.Files[0].Path = "/etc/passwd" }, "snapshotAssets.files[0] (/etc/passwd): expected a repository-relative path"},
		{"snapshot file bad sum", func(l *Lock) { l.SnapshotAssets.Files[1].SHA256 = "sha256:" + strings.Repeat("e", 64) }, "snapshotAssets.files[1] (manifests/05_operand_rbac.yaml).sha256"},
		{"snapshot file twice", func(l *Lock) { l.SnapshotAssets.Files[1].Path = l.SnapshotAssets.Files[0].Path }, "snapshotAssets.files[1] (assets/csi_controller_deployment.yaml): path listed twice"},
		{"image key twice", func(l *Lock) { l.Images[1].Key = l.Images[0].Key }, "key listed twice"},
		{"image from", func(l *Lock) { l.Images[0].From = "cache" }, "expected bundle or payload"},
		{"image no key", func(l *Lock) { l.Images[0].Key = "" }, "key required"},
		{"image tag ref", func(l *Lock) { l.Images[0].Arch["x86_64"] = "quay.io/a/b:latest" }, "<repository>@sha256"},
		{"image no arch", func(l *Lock) { l.Images[0].Arch = nil }, "at least one architecture"},
		{"image bad arch digest", func(l *Lock) { l.Images[0].Arch["x86_64"] = "latest" }, `.arch.x86_64: "latest"`},
		{"wrong apiVersion", func(l *Lock) { l.APIVersion = "v9" }, "expected " + APIVersion},
		{"image bad list digest", func(l *Lock) { l.Images[0].ListDigest = "sha256:zz" }, "listDigest"},
		{"file escapes", func(l *Lock) { l.Files[0].Path = "../x" }, "relative path inside"},
		{"file is the lock", func(l *Lock) { l.Files[0].Path = Path }, "its own checksum"},
		{"file bad sum", func(l *Lock) { l.Files[0].SHA256 = "x" }, "64 hex digits"},
		{"file twice", func(l *Lock) { l.Files[1].Path = l.Files[0].Path }, "path listed twice"},
		{"lvms choice and payload rule", func(l *Lock) {
			l.LVMS, l.PayloadRule, l.PayloadSource = &LVMS{Minor: "4.21", Rule: "newest-below", Reason: "r"}, "tree", "scripts/auto-rebase/last_rebase.sh"
		}, ""},
		{"bad lvms minor", func(l *Lock) { l.LVMS = &LVMS{Minor: "v4.21", Rule: "flag"} }, `lvms.minor: "v4.21"`},
		{"bad payload rule", func(l *Lock) { l.PayloadRule = "latest" }, `payloadRule: "latest": expected one of tree, newest, pinned`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := sample()
			tc.mutate(l)
			err := l.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if _, merr := l.Marshal(); merr == nil {
				t.Fatal("Marshal accepted an invalid lock")
			}
		})
	}
}

func TestDrift(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{
		"assets/components/lvms/a.yaml":      []byte("a\n"),
		"assets/components/lvms/b.yaml":      []byte("b\n"),
		"assets/release/release-x86_64.json": []byte("{}\n"),
	}
	for p, b := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := sample()
	l.SetFiles(files)
	if drift, err := l.Drift(root); err != nil || len(drift) != 0 {
		t.Fatalf("clean tree: drift %v, %v", drift, err)
	}
	if err := os.WriteFile(filepath.Join(root, "assets/components/lvms/b.yaml"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "assets/release/release-x86_64.json")); err != nil {
		t.Fatal(err)
	}
	drift, err := l.Drift(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"assets/components/lvms/b.yaml", "assets/release/release-x86_64.json"}, drift); diff != "" {
		t.Fatalf("drift (-want +got):\n%s", diff)
	}
}

// TestMarshalFillsKind: a lock built as a struct literal gets apiVersion and kind.
func TestMarshalFillsKind(t *testing.T) {
	l := sample()
	l.APIVersion, l.Kind = "", ""
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("apiVersion: "+APIVersion+"\n")) || !bytes.Contains(b, []byte("kind: "+Kind+"\n")) {
		t.Fatalf("apiVersion/kind not filled:\n%s", b)
	}
}

// TestCompareEveryField: each recorded field Compare covers is reported, by name, when it
// differs; the tool version and the snapshot-assets source are not.
func TestCompareEveryField(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(l *Lock)
		want  string // "" for the exempt fields
	}{
		{"ocp", func(l *Lock) { l.OCP = "4.19" }, "ocp:"},
		{"era", func(l *Lock) { l.Era = "lvms-4.19" }, "era:"},
		{"payloadVersion", func(l *Lock) { l.PayloadVersion = "4.18.13" }, "payloadVersion:"},
		{"lvms", func(l *Lock) { l.LVMS = &LVMS{Minor: "4.18", Rule: "exact", Reason: "x"} }, "lvms:"},
		{"bundle", func(l *Lock) { l.Bundle.Version = "v4.18.5" }, "bundle:"},
		{"payloads", func(l *Lock) { l.Payloads[0].Digest = d("f") }, "payloads:"},
		{"snapshotAssets.commit", func(l *Lock) { l.SnapshotAssets.Commit = "f" }, "snapshotAssets.commit:"},
		{"snapshotAssets.sha256", func(l *Lock) { l.SnapshotAssets.SHA256 = d("f") }, "snapshotAssets.sha256:"},
		{"snapshotAssets.files", func(l *Lock) { l.SnapshotAssets.Files[0].SHA256 = strings.Repeat("f", 64) }, "snapshotAssets.files[assets/csi_controller_deployment.yaml].sha256:"},
		{"snapshotAssets.files added", func(l *Lock) {
			l.SnapshotAssets.Files = append(l.SnapshotAssets.Files, File{Path: "assets/x.yaml", SHA256: strings.Repeat("f", 64)})
		}, "snapshotAssets.files[assets/x.yaml].sha256:"},
		{"images", func(l *Lock) { l.Images[1].From = "payload" }, "images[lvms_operator]:"},
		{"files", func(l *Lock) { l.Files[0].SHA256 = strings.Repeat("f", 64) }, ".sha256: the lock records ffff"},
		{"toolVersion", func(l *Lock) { l.ToolVersion = "v9" }, ""},
		{"snapshotAssets.source", func(l *Lock) { l.SnapshotAssets.Source = "/a/copy" }, ""},
	} {
		t.Run(tc.field, func(t *testing.T) {
			actual, recorded := sample(), sample()
			tc.edit(recorded)
			got := strings.Join(Compare(recorded, actual), "\n")
			if tc.want == "" {
				if got != "" {
					t.Errorf("an exempt field is reported: %s", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) || strings.Count(got, "\n") != 0 {
				t.Errorf("Compare = %q, want one difference naming %q", got, tc.want)
			}
		})
	}
}

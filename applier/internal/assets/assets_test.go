package assets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A template naming a key the parameters lack fails, naming the file and the key, so a stale
// release JSON is obvious; the functions MicroShift's templates use are there.
func TestRender(t *testing.T) {
	params := map[string]any{"ReleaseImage": map[string]string{"topolvm_csi": "img"}, "SocketName": "/run/lvmd/lvmd.socket"}
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		{"image", "image: {{ .ReleaseImage.topolvm_csi }}", "image: img", ""},
		{"Dir", "{{ Dir .SocketName }}", "/run/lvmd", ""},
		{"Sha256sum", `{{ Sha256sum "" }}`, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", ""},
		{"missing key", "image: {{ .ReleaseImage.topolvm_node }}", "", `rendering a.yaml: missing key "topolvm_node" (is it in the release JSON?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Render("a.yaml", []byte(tc.in), params)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render: %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Fatalf("Render = %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}

// Documents that are empty but for comments and markers are skipped; a document without
// apiVersion, kind or name is an error naming the file and the document.
func TestDecodeDocs(t *testing.T) {
	docs, err := DecodeDocs("a.yaml", []byte("# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n# only a comment\n"))
	if err != nil || len(docs) != 1 || docs[0].GetName() != "x" {
		t.Fatalf("DecodeDocs = %v, %v; want the ConfigMap x", docs, err)
	}
	if _, err := DecodeDocs("b.yaml", []byte("kind: ConfigMap\n")); err == nil || !strings.Contains(err.Error(), "asset b.yaml document 0") {
		t.Errorf("DecodeDocs without apiVersion: %v", err)
	}
}

// Sanitize drops what the typed API does not have and every null (creationTimestamp), and
// keeps custom resources as written minus status.
func TestSanitize(t *testing.T) {
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "creationTimestamp": nil},
		"spec":     map[string]any{"label": map[string]any{"a": "b"}, "replicas": int64(1)},
		"status":   map[string]any{"replicas": int64(1)},
	}}
	got, err := Sanitize(dep)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Object["status"]; ok {
		t.Error("status kept")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "label"); ok {
		t.Error("spec.label (not a Deployment field) kept")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(got.Object, "metadata", "creationTimestamp"); ok {
		t.Error("null creationTimestamp kept")
	}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "lvm.topolvm.io/v1alpha1", "kind": "LVMCluster",
		"metadata": map[string]any{"name": "lvms"}, "spec": map[string]any{"x": nil, "y": []any{map[string]any{"z": nil}}}, "status": map[string]any{},
	}}
	got, err = Sanitize(cr)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"y": []any{map[string]any{}}}; !equalJSON(got.Object["spec"], want) {
		t.Errorf("custom resource spec = %v, want %v", got.Object["spec"], want)
	}
}

func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// A component directory that is missing or has no YAML is an error, never "ships nothing".
func TestRead(t *testing.T) {
	cm := &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}
	full := fstest.MapFS{StorageDir + "/a.yaml": cm, SnapshotDir + "/b.yaml": cm, SnapshotDir + "/05_operand_rbac.yaml": cm, StorageDir + "/README.md": cm}
	files, err := Read(full)
	if err != nil || len(files) != 2 || files[0].Comp != Snapshot || files[1].Comp != Storage {
		t.Fatalf("Read = %v, %v; want b.yaml (snapshot) then a.yaml (storage)", files, err)
	}
	if _, err := Read(fstest.MapFS{StorageDir + "/a.yaml": cm}); err == nil || !strings.Contains(err.Error(), SnapshotDir+" is missing") {
		t.Errorf("Read without the snapshot tree: %v", err)
	}
	if _, err := Read(fstest.MapFS{StorageDir + "/README.md": cm, SnapshotDir + "/b.yaml": cm}); err == nil || !strings.Contains(err.Error(), "has no YAML files") {
		t.Errorf("Read without storage YAML: %v", err)
	}
}

// An asset that is a FIFO, a symbolic link or larger than the cap is an error naming it; nothing
// is read from it (a FIFO would block the start-up, a link to /dev/zero fill memory).
func TestReadRefusesIrregularFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"fifo.yaml", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe (FIFO), not a regular file"},
		{"zero.yaml", func(p string) error { return os.Symlink("/dev/zero", p) }, "a symbolic link, not a regular file"},
		{"huge.yaml", func(p string) error { return os.WriteFile(p, make([]byte, MaxFileSize+1), 0o644) }, "more than the 8388608 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{StorageDir, SnapshotDir} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, d, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.make(filepath.Join(root, StorageDir, tc.name)); err != nil {
				t.Fatal(err)
			}
			_, err := Read(os.DirFS(root))
			if err == nil || !strings.Contains(err.Error(), StorageDir+"/"+tc.name) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want an error naming %s: %q", err, tc.name, tc.want)
			}
		})
	}
}

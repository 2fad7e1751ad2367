package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fixtures are the hand-modelled bundles under testdata/bundles, one per era shape.
var fixtures = []string{"v4.14.14", "v4.15.12", "v4.16.0", "v4.17.7", "v4.18.4", "v4.20.0", "v4.23.1"}

func TestLoadFixtures(t *testing.T) {
	want := map[string]struct {
		objects, webhooks int
		ns                string
	}{
		"v4.14.14": {15, 1, "openshift-storage"},
		"v4.15.12": {13, 1, "openshift-storage"},
		"v4.16.0":  {12, 1, "openshift-storage"},
		"v4.17.7":  {12, 1, "openshift-storage"},
		"v4.18.4":  {11, 1, "openshift-storage"},
		"v4.20.0":  {11, 1, "openshift-lvm-storage"},
		"v4.23.1":  {11, 2, "openshift-lvm-storage"},
	}
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			b, err := Load(filepath.Join("testdata", "bundles", name))
			if err != nil {
				t.Fatal(err)
			}
			w := want[name]
			if "v"+b.Version != name {
				t.Errorf("Version = %q, want %q", b.Version, strings.TrimPrefix(name, "v"))
			}
			if b.CSVFile != "manifests/lvms-operator.clusterserviceversion.yaml" {
				t.Errorf("CSVFile = %q", b.CSVFile)
			}
			if len(b.Objects) != w.objects {
				t.Errorf("%d objects, want %d", len(b.Objects), w.objects)
			}
			if n := len(b.CSV.Spec.WebhookDefinitions); n != w.webhooks {
				t.Errorf("%d webhook definitions, want %d", n, w.webhooks)
			}
			if got := b.CSV.Annotations[SuggestedNamespaceAnnotation]; got != w.ns {
				t.Errorf("suggested namespace %q, want %q", got, w.ns)
			}
			if b.Annotations[PackageAnnotation] != "lvms-operator" {
				t.Errorf("package annotation = %q", b.Annotations[PackageAnnotation])
			}
			for i := 1; i < len(b.Objects); i++ {
				if b.Objects[i-1].File >= b.Objects[i].File {
					t.Errorf("objects not in file order: %s, %s", b.Objects[i-1].File, b.Objects[i].File)
				}
			}
		})
	}
}

// copyBundle copies a fixture bundle into a temp dir for mutation.
func copyBundle(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "bundles", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// editFile applies a string replacement to a bundle file and fails if it did not apply.
func editFile(t testing.TB, dir, rel, old, new string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

const csvFile = "manifests/lvms-operator.clusterserviceversion.yaml"

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"no CSV", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, csvFile)); err != nil {
				t.Fatal(err)
			}
		}, []string{"no ClusterServiceVersion (kind ClusterServiceVersion) in manifests/"}},
		{"two CSVs", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, csvFile))
			if err := os.WriteFile(filepath.Join(dir, "manifests/zz-copy.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"two ClusterServiceVersions", csvFile, "manifests/zz-copy.yaml"}},
		{"bad YAML", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "manifests/broken.yaml"), []byte("kind: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"decoding manifests/broken.yaml"}},
		// Parsing depth: the decoders' own caps (10,000 levels in go.yaml.in/yaml's scanner,
		// flow and block alike, and in encoding/json's) end a document nested a million deep
		// with an error naming the file, not a stack overflow or a recursion through memory.
		{"deep YAML flow", func(t *testing.T, dir string) {
			writeDeep(t, dir, "manifests/deep.yaml", "kind: A\nspec: "+strings.Repeat("[", 1_000_000))
		}, []string{"decoding manifests/deep.yaml", "exceeded max depth"}},
		{"deep YAML block", func(t *testing.T, dir string) {
			writeDeep(t, dir, "manifests/deep.yaml", "kind: A\nspec:\n"+strings.Repeat("- ", 1_000_000)+"x\n")
		}, []string{"decoding manifests/deep.yaml", "exceeded max depth"}},
		{"deep JSON", func(t *testing.T, dir string) {
			writeDeep(t, dir, "manifests/deep.json", `{"kind": "A", "spec": `+strings.Repeat("[", 1_000_000))
		}, []string{"decoding manifests/deep.json", "exceeded max depth"}},
		{"deep CSV", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "  version: 4.18.4\n", "  version: 4.18.4\n  x-deep: "+strings.Repeat("[", 1_000_000)+"\n")
		}, []string{"decoding " + csvFile, "exceeded max depth"}},
		{"two documents", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "manifests/two.yaml"), []byte("kind: A\n---\nkind: B\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"decoding manifests/two.yaml", "more than one document"}},
		{"no kind", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "manifests/nokind.yaml"), []byte("apiVersion: v1\nmetadata: {name: x}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"manifests/nokind.yaml: field kind is empty"}},
		{"no name", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "manifests/noname.yaml"), []byte("apiVersion: v1\nkind: Service\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"manifests/noname.yaml: Service has no metadata.name"}},
		{"unknown install strategy", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "strategy: deployment", "strategy: helm")
		}, []string{csvFile, `field spec.install.strategy is "helm", expected "deployment"`}},
		{"missing deployment", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "deploymentName: lvms-operator", "deploymentName: lvms-operatorx")
		}, []string{csvFile, `spec.webhookdefinitions[0].deploymentName "lvms-operatorx": missing deployment`}},
		{"no deployments", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "      deployments:\n", "      deployments: []\n      x-deployments:\n")
		}, []string{csvFile, "field spec.install.spec.deployments is empty"}},
		{"no version", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "  version: 4.18.4\n", "\n")
		}, []string{csvFile, "field spec.version is missing"}},
		{"unknown webhook type", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "type: ValidatingAdmissionWebhook", "type: ConversionWebhook")
		}, []string{csvFile, `spec.webhookdefinitions[0].type "ConversionWebhook" is not supported`}},
		{"empty service account", func(t *testing.T, dir string) {
			editFile(t, dir, csvFile, "serviceAccountName: vg-manager", "serviceAccountName: ''")
		}, []string{csvFile, "spec.install.spec.clusterPermissions[1].serviceAccountName is empty"}},
		{"owned CRD missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "manifests/topolvm.io_logicalvolumes.yaml")); err != nil {
				t.Fatal(err)
			}
		}, []string{csvFile, "spec.customresourcedefinitions.owned", "logicalvolumes"}},
		{"no annotations", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, AnnotationsFile)); err != nil {
				t.Fatal(err)
			}
		}, []string{"reading metadata/annotations.yaml"}},
		{"no package annotation", func(t *testing.T, dir string) {
			editFile(t, dir, AnnotationsFile, "operators.operatorframework.io.bundle.package.v1: lvms-operator", "x: y")
		}, []string{"metadata/annotations.yaml: field annotations.operators.operatorframework.io.bundle.package.v1 is empty"}},
		{"no manifests dir", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ManifestsDir)); err != nil {
				t.Fatal(err)
			}
		}, []string{"reading manifests/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t, "v4.18.4")
			tc.edit(t, dir)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range append(tc.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadSkipsDotfilesAndDirs(t *testing.T) {
	dir := copyBundle(t, "v4.18.4")
	if err := os.WriteFile(filepath.Join(dir, "manifests/.hidden.yaml"), []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "manifests/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
}

// TestOwnedCRDsInBundle pins the provided-APIs check that replaced operator-registry's
// AllProvidedAPIsInBundle: group, plural, kind and version must all match a shipped CRD.
func TestOwnedCRDsInBundle(t *testing.T) {
	crd := func(apiVersion, extra string) *unstructured.Unstructured {
		var m map[string]interface{}
		doc := "apiVersion: " + apiVersion + "\nkind: CustomResourceDefinition\nmetadata: {name: lvs.topolvm.io}\nspec:\n  group: topolvm.io\n  names: {kind: LogicalVolume, plural: lvs}\n" + extra
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	v1 := crd("apiextensions.k8s.io/v1", "  versions: [{name: v1}, {name: v1beta1}]\n")
	beta := crd("apiextensions.k8s.io/v1beta1", "  version: v1\n")
	notCRD := crd("example.com/v1", "  versions: [{name: v1}]\n")
	for _, tc := range []struct {
		name  string
		owned v1alpha1.CRDDescription
		objs  []*unstructured.Unstructured
		err   string
	}{
		{"served version", v1alpha1.CRDDescription{Name: "lvs.topolvm.io", Version: "v1beta1", Kind: "LogicalVolume"}, []*unstructured.Unstructured{v1}, ""},
		{"v1beta1 single version", v1alpha1.CRDDescription{Name: "lvs.topolvm.io", Version: "v1", Kind: "LogicalVolume"}, []*unstructured.Unstructured{beta}, ""},
		{"unserved version", v1alpha1.CRDDescription{Name: "lvs.topolvm.io", Version: "v2", Kind: "LogicalVolume"}, []*unstructured.Unstructured{v1}, "owned CRD lvs.topolvm.io (kind LogicalVolume, version v2) is not in the bundle"},
		{"other kind", v1alpha1.CRDDescription{Name: "lvs.topolvm.io", Version: "v1", Kind: "Volume"}, []*unstructured.Unstructured{v1}, "kind Volume"},
		{"other group", v1alpha1.CRDDescription{Name: "lvs.example.io", Version: "v1", Kind: "LogicalVolume"}, []*unstructured.Unstructured{v1}, "lvs.example.io"},
		{"not a CRD", v1alpha1.CRDDescription{Name: "lvs.topolvm.io", Version: "v1", Kind: "LogicalVolume"}, []*unstructured.Unstructured{notCRD}, "not in the bundle"},
		{"bad name", v1alpha1.CRDDescription{Name: "lvs", Version: "v1", Kind: "LogicalVolume"}, []*unstructured.Unstructured{v1}, `name "lvs": expected plural.group`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csv := &v1alpha1.ClusterServiceVersion{}
			csv.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{tc.owned}
			err := ownedCRDsInBundle(csv, tc.objs)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.Spec.CustomResourceDefinitions.Owned = []v1alpha1.CRDDescription{{Name: "metrics.example.io", Version: "v1", Kind: "Metric"}}
	csv.Spec.APIServiceDefinitions.Owned = []v1alpha1.APIServiceDescription{{Name: "metrics", Group: "example.io", Version: "v1", Kind: "Metric"}}
	if err := ownedCRDsInBundle(csv, nil); err != nil {
		t.Errorf("an owned API service provides the API: %v", err)
	}
}

// writeDeep writes a deeply nested document into the bundle at dir.
func writeDeep(t *testing.T, dir, rel, doc string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

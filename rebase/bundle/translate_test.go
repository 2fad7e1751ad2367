package bundle

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/internal/kinds"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

func eraNamed(t testing.TB, name string) era.Era {
	t.Helper()
	for _, e := range era.Table() {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no era %s", name)
	return era.Era{}
}

// render writes a Result as one YAML stream: a summary document, then every object.
func render(t testing.TB, r *Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	summary := map[string]interface{}{
		"namespace": r.Namespace, "images": r.Images, "excluded": r.Excluded, "warnings": r.Warnings,
	}
	if len(r.Notes) > 0 {
		summary["notes"] = r.Notes
	}
	for _, v := range append([]interface{}{summary}, objectsOf(r)...) {
		data, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes()
}

func objectsOf(r *Result) []interface{} {
	out := make([]interface{}, len(r.Objects))
	for i, o := range r.Objects {
		out[i] = o.Object
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (run go test -update and review the diff)\n--- got:\n%s", path, got)
	}
}

// goldenCases pair every era with the bundle shape it ships.
var goldenCases = []struct {
	name, bundle, era, tag string
}{
	{"topolvm-4.14", "v4.14.14", "topolvm-4.14", "v4.14.14-1"},
	{"topolvm-4.15", "v4.15.12", "topolvm-4.15", "v4.15.12"},
	{"topolvm-4.16", "v4.15.12", "topolvm-4.16", "v4.15.12"},
	{"lvms-4.17-leftover-topolvm-csi", "v4.16.0", "lvms-4.17", "v4.16.0"},
	{"lvms-4.17", "v4.17.7", "lvms-4.17", "v4.17.7-2"},
	{"lvms-4.18", "v4.18.4", "lvms-4.18", "v4.18.4"},
	{"lvms-4.20", "v4.20.0", "lvms-4.20", "v4.20.0-10"},
	{"lvms-4.20-mutating-webhook", "v4.23.1", "lvms-4.20", "v4.23.1"},
}

func TestTranslateGolden(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range goldenCases {
		covered[tc.era] = true
	}
	for _, e := range era.Table() {
		if !covered[e.Name] {
			t.Errorf("era %s has no golden case: add a bundle fixture for it", e.Name)
		}
	}
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(filepath.Join("testdata", "bundles", tc.bundle))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Translate(b, eraNamed(t, tc.era), Options{VersionTag: tc.tag})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, r)
			golden(t, tc.name+".yaml", render(t, r))
		})
	}
}

// checkInvariants asserts the legacy defects are gone, whatever the input.
func checkInvariants(t testing.TB, r *Result) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range r.Objects {
		key := fmt.Sprintf("%s/%s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		if seen[key] {
			t.Errorf("duplicate object %s", key)
		}
		seen[key] = true
		if o.GetName() == "" || o.GetAPIVersion() == "" {
			t.Errorf("object %s without name or apiVersion", key)
		}
		if kinds.ClusterScoped(o.GetKind()) && o.GetNamespace() != "" {
			t.Errorf("cluster-scoped %s has a namespace", key)
		}
		if !kinds.ClusterScoped(o.GetKind()) && o.GetNamespace() == "" {
			t.Errorf("namespaced %s has no namespace", key)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "roleRef", "namespace"); found {
			t.Errorf("%s has roleRef.namespace", key)
		}
		for k := range o.Object {
			switch k {
			case "apiVersion", "kind", "metadata", "spec", "rules", "roleRef", "subjects", "data", "webhooks", "status":
			default:
				t.Errorf("%s has stray top-level field %q", key, k)
			}
		}
		if _, ok := o.Object["status"]; ok && o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s carries status", key)
		}
	}
}

func TestTranslateSemantics(t *testing.T) {
	load := func(t *testing.T, name string) *Bundle {
		b, err := Load(filepath.Join("testdata", "bundles", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	find := func(r *Result, kind, name string) *unstructured.Unstructured {
		for _, o := range r.Objects {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
		return nil
	}
	t.Run("topolvm era ships only topolvm RBAC, the logicalvolumes CRD and images", func(t *testing.T) {
		r, err := Translate(load(t, "v4.14.14"), eraNamed(t, "topolvm-4.14"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, o := range r.Objects {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		}
		want := "CustomResourceDefinition/logicalvolumes.topolvm.io ServiceAccount/topolvm-controller ServiceAccount/topolvm-node " +
			"ClusterRole/topolvm-controller ClusterRole/topolvm-node Role/topolvm-controller " +
			"ClusterRoleBinding/topolvm-controller ClusterRoleBinding/topolvm-node RoleBinding/topolvm-controller ConfigMap/lvms-version"
		if got := strings.Join(kinds, " "); got != want {
			t.Errorf("objects:\n got %s\nwant %s", got, want)
		}
		var keys []string
		for _, i := range r.Images {
			keys = append(keys, i.Key)
			if !strings.Contains(i.Ref, "@sha256:") {
				t.Errorf("image %s ref %q is not a digest ref", i.Key, i.Ref)
			}
		}
		// Declared keys only: the era declares the bundle's other relatedImages unshipped.
		if got := strings.Join(keys, ","); got != "topolvm_csi,topolvm_csi_registrar,topolvm_csi_livenessprobe,topolvm_csi_resizer,topolvm_csi_provisioner" {
			t.Errorf("image keys %s", got)
		}
		var unshipped []string
		for _, x := range r.Excluded {
			if x.Kind == "relatedImage" {
				unshipped = append(unshipped, x.Name)
			}
		}
		if got := strings.Join(unshipped, ","); got != "lvms-operator,lvms-must-gather,rbac-proxy,topolvm-csi-snapshotter" {
			t.Errorf("relatedImages reported unshipped: %s", got)
		}
		for _, w := range r.Warnings {
			if strings.Contains(w, "not declared") {
				t.Errorf("declared-unshipped image warned about: %s", w)
			}
		}
		if v, _, _ := unstructured.NestedString(find(r, "ConfigMap", "lvms-version").Object, "data", "version"); v != "v4.14.14" {
			t.Errorf("default version tag %q, want v4.14.14", v)
		}
	})
	t.Run("RBAC rules carried over exactly", func(t *testing.T) {
		b := load(t, "v4.18.4")
		r, err := Translate(b, eraNamed(t, "lvms-4.18"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		perms := b.CSV.Spec.InstallStrategy.StrategySpec
		for _, c := range []struct {
			kind string
			in   interface{}
		}{{"ClusterRole", perms.ClusterPermissions[0].Rules}, {"Role", perms.Permissions[1].Rules}} {
			name := map[string]string{"ClusterRole": perms.ClusterPermissions[0].ServiceAccountName, "Role": perms.Permissions[1].ServiceAccountName}[c.kind]
			o := find(r, c.kind, name)
			if o == nil {
				t.Fatalf("no %s %s", c.kind, name)
			}
			want, _ := yaml.Marshal(c.in)
			got, _ := yaml.Marshal(o.Object["rules"])
			if !bytes.Equal(want, got) {
				t.Errorf("%s %s rules:\n got %s\nwant %s", c.kind, name, got, want)
			}
		}
	})
	t.Run("two permission entries for one service account", func(t *testing.T) {
		b := load(t, "v4.18.4")
		p := &b.CSV.Spec.InstallStrategy.StrategySpec
		p.Permissions = append(p.Permissions, p.Permissions[0])
		p.Permissions[2].Rules = p.Permissions[2].Rules[:1]
		r, err := Translate(b, eraNamed(t, "lvms-4.18"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, r)
		for _, n := range []string{"lvms-operator", "lvms-operator-2"} {
			if find(r, "Role", n) == nil || find(r, "RoleBinding", n) == nil {
				t.Errorf("missing Role/RoleBinding %s", n)
			}
		}
		rb := find(r, "RoleBinding", "lvms-operator-2")
		if n, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name"); n != "lvms-operator-2" {
			t.Errorf("lvms-operator-2 binds %s", n)
		}
		if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "naming this one lvms-operator-2") {
			t.Errorf("no warning about the second entry: %v", r.Warnings)
		}
	})
	t.Run("namespace precedence", func(t *testing.T) {
		b := load(t, "v4.20.0")
		e := eraNamed(t, "lvms-4.20")
		for _, c := range []struct {
			name, override, eraNS, want string
		}{
			{"override wins", "custom", "openshift-storage", "custom"},
			{"era next", "", "openshift-storage", "openshift-storage"},
			{"CSV suggestion last", "", "", "openshift-lvm-storage"},
		} {
			t.Run(c.name, func(t *testing.T) {
				e.Namespace = c.eraNS
				var warned []string
				r, err := Translate(b, e, Options{Namespace: c.override, Warnf: func(f string, a ...interface{}) { warned = append(warned, fmt.Sprintf(f, a...)) }})
				if err != nil {
					t.Fatal(err)
				}
				if r.Namespace != c.want || find(r, "Deployment", "lvms-operator").GetNamespace() != c.want {
					t.Errorf("namespace %s, want %s", r.Namespace, c.want)
				}
				hook := find(r, "ValidatingWebhookConfiguration", "vlvmcluster.kb.io-lvms-operator")
				sel, _, _ := unstructured.NestedStringMap(hook.Object["webhooks"].([]interface{})[0].(map[string]interface{}), "namespaceSelector", "matchLabels")
				if sel[NamespaceNameLabel] != c.want {
					t.Errorf("namespaceSelector %v, want %s=%s", sel, NamespaceNameLabel, c.want)
				}
				if len(warned) != len(r.Warnings) {
					t.Errorf("Warnf got %d warnings, result has %d", len(warned), len(r.Warnings))
				}
			})
		}
	})
	// The era declares what its CSVs suggest: that suggestion is a note; any other is new
	// bundle content and warns, naming what the era expected.
	t.Run("suggested namespace", func(t *testing.T) {
		for _, c := range []struct{ suggested, warning, note string }{
			{"openshift-lvm-storage", "", "CSV suggests namespace openshift-lvm-storage, as every bundle of era lvms-4.20 does; using openshift-storage"},
			{"openshift-lvms", "CSV suggests namespace openshift-lvms, era lvms-4.20 expects openshift-lvm-storage; using openshift-storage", ""},
			{"openshift-storage", "", ""},
		} {
			b := load(t, "v4.20.0")
			b.CSV.Annotations[SuggestedNamespaceAnnotation] = c.suggested
			r, err := Translate(b, eraNamed(t, "lvms-4.20"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.Warnings, "\n"); got != c.warning {
				t.Errorf("%s: warnings %q, want %q", c.suggested, got, c.warning)
			}
			if got := strings.Join(r.Notes, "\n"); got != c.note {
				t.Errorf("%s: notes %q, want %q", c.suggested, got, c.note)
			}
		}
	})
	t.Run("webhook without a shipped Service", func(t *testing.T) {
		b := load(t, "v4.23.1")
		var kept []Object
		for _, o := range b.Objects {
			if o.Object.GetName() != "lvms-webhook-service" {
				kept = append(kept, o)
			}
		}
		b.Objects = kept
		e := eraNamed(t, "lvms-4.20")
		_, err := Translate(b, e, Options{})
		if err == nil || !containsAll(err.Error(), "webhook mlvmcluster.kb.io of deployment lvms-operator needs a Service", "port 443→9443",
			"no shipped file creates one", "the bundle provides Service lvms-operator-metrics-service") {
			t.Fatalf("error %v", err)
		}
		// A declared mapping to a Service MicroShift runs, or the webhooks declared unshipped.
		e.WebhookServices = []era.WebhookService{{Webhook: "mlvmcluster.kb.io", Namespace: "ns", Name: "svc"}, {Webhook: "vlvmcluster.kb.io", Namespace: "ns", Name: "svc", Port: 8443}}
		r, err := Translate(b, e, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range r.Objects {
			if strings.HasSuffix(o.GetKind(), "WebhookConfiguration") {
				ref := o.Object["webhooks"].([]interface{})[0].(map[string]interface{})["clientConfig"].(map[string]interface{})["service"].(map[string]interface{})
				if ref["namespace"] != "ns" || ref["name"] != "svc" || (ref["port"] != int64(443) && ref["port"] != int64(8443)) {
					t.Errorf("%s calls %v", o.GetName(), ref)
				}
			}
		}
		e.WebhookServices = nil
		e.UnshippedWebhooks = []era.Unshipped{{Name: "mlvmcluster.kb.io", Why: "a"}, {Name: "vlvmcluster.kb.io", Why: "b"}}
		if r, err = Translate(b, e, Options{}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range r.Excluded {
			if strings.HasSuffix(x.Kind, "WebhookConfiguration") && strings.Contains(x.Reason, "declared unshipped") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("excluded %+v, want both webhooks", r.Excluded)
		}
	})
	t.Run("CSV timeout and matchPolicy are kept", func(t *testing.T) {
		b := load(t, "v4.18.4")
		timeout := int32(7)
		exact := "Exact"
		w := &b.CSV.Spec.WebhookDefinitions[0]
		w.TimeoutSeconds = &timeout
		w.MatchPolicy = (*admissionMatchPolicy)(&exact)
		r, err := Translate(b, eraNamed(t, "lvms-4.18"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		hook := find(r, "ValidatingWebhookConfiguration", "vlvmcluster.kb.io-lvms-operator").Object["webhooks"].([]interface{})[0].(map[string]interface{})
		if hook["timeoutSeconds"] != int64(7) || hook["matchPolicy"] != "Exact" {
			t.Errorf("timeoutSeconds %v matchPolicy %v", hook["timeoutSeconds"], hook["matchPolicy"])
		}
	})
}

func TestTranslateErrors(t *testing.T) {
	tests := []struct {
		name, bundle, era string
		edit              func(b *Bundle)
		want              []string
	}{
		{name: "TopoLVM era on a 4.16 bundle lacks sidecar images", bundle: "v4.16.0", era: "topolvm-4.16",
			want: []string{"bundle lvms-operator.v4.16.0", csvFile, "spec.relatedImages lacks topolvm-csi-registrar, topolvm-csi-livenessprobe, topolvm-csi-resizer, topolvm-csi-provisioner required by era topolvm-4.16"}},
		{name: "lvms-operator missing", bundle: "v4.18.4", era: "lvms-4.18",
			edit: func(b *Bundle) { b.CSV.Spec.RelatedImages = b.CSV.Spec.RelatedImages[1:] },
			want: []string{csvFile, "spec.relatedImages lacks lvms-operator required by era lvms-4.18"}},
		{name: "related image listed twice", bundle: "v4.18.4", era: "lvms-4.18",
			edit: func(b *Bundle) {
				ri := b.CSV.Spec.RelatedImages[0]
				ri.Image += "0"
				b.CSV.Spec.RelatedImages = append(b.CSV.Spec.RelatedImages, ri)
			},
			want: []string{csvFile, `spec.relatedImages[2]: name "lvms-operator" appears twice`}},
		{name: "container image not a relatedImage", bundle: "v4.18.4", era: "lvms-4.18",
			edit: func(b *Bundle) {
				b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image = "quay.io/x/y@sha256:0"
			},
			want: []string{csvFile, "container manager: image quay.io/x/y@sha256:0 is not in spec.relatedImages"}},
		{name: "derived key collides", bundle: "v4.18.4", era: "lvms-4.18",
			edit: func(b *Bundle) {
				ri := b.CSV.Spec.RelatedImages[0]
				ri.Name = "lvms_operator"
				b.CSV.Spec.RelatedImages = append(b.CSV.Spec.RelatedImages, ri)
			},
			want: []string{csvFile, `relatedImage lvms_operator: release key "lvms_operator" collides with relatedImage lvms-operator`}},
		{name: "bundle object collides with CSV RBAC", bundle: "v4.18.4", era: "lvms-4.18",
			edit: func(b *Bundle) {
				o := &unstructured.Unstructured{}
				o.SetAPIVersion("v1")
				o.SetKind("Service")
				o.SetName("lvms-webhook-service")
				b.Objects = append(b.Objects, Object{File: "manifests/dup.yaml", Object: o})
			},
			want: []string{csvFile, "two Service objects named openshift-storage/lvms-webhook-service"}},
		{name: "no namespace anywhere", bundle: "v4.18.4", era: "",
			edit: func(b *Bundle) { delete(b.CSV.Annotations, SuggestedNamespaceAnnotation) },
			want: []string{csvFile, "no target namespace"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(filepath.Join("testdata", "bundles", tc.bundle))
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(b)
			}
			e := era.Era{Name: "no-namespace", BundleImages: []era.ImageKey{{Name: "lvms-operator", Key: "lvms_operator"}}}
			if tc.era != "" {
				e = eraNamed(t, tc.era)
			}
			_, err = Translate(b, e, Options{})
			if err == nil {
				t.Fatal("Translate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// FuzzTranslateCSV feeds arbitrary CSVs through the parser and, when accepted, the translator
// for every era: it must not panic, and its output must keep the invariants.
func FuzzTranslateCSV(f *testing.F) {
	for _, name := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", "bundles", name, csvFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		csv, err := ParseCSV(data)
		if err != nil {
			return
		}
		b := &Bundle{CSV: csv, CSVFile: csvFile, Version: csv.Spec.Version.String()}
		for _, e := range era.Table() {
			r, err := Translate(b, e, Options{})
			if err != nil {
				continue
			}
			checkInvariants(t, r)
			if len(r.Images) < len(e.BundleImages) {
				t.Fatalf("era %s: %d images, want at least %d", e.Name, len(r.Images), len(e.BundleImages))
			}
			for i, img := range r.Images {
				if img.Undeclared != (i >= len(e.BundleImages)) {
					t.Fatalf("era %s: image %d (%s) undeclared=%v", e.Name, i, img.Name, img.Undeclared)
				}
			}
		}
	})
}

type admissionMatchPolicy = admissionregistrationv1.MatchPolicyType

// TestTranslateEvolution feeds a bundle that grew the way the Subprovisioner enhancement would
// make it grow: a new relatedImage, a second Deployment using it, an image env var, a new
// CRD field and a NetworkPolicy. Nothing may be dropped silently.
func TestTranslateEvolution(t *testing.T) {
	b, err := Load(filepath.Join("testdata", "bundles", "v4.18.4"))
	if err != nil {
		t.Fatal(err)
	}
	const newRef = "registry.redhat.io/lvms4/subprovisioner-csi-rhel9@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	b.CSV.Spec.RelatedImages = append(b.CSV.Spec.RelatedImages, v1alpha1.RelatedImage{Name: "subprovisioner-csi", Image: newRef})
	spec := &b.CSV.Spec.InstallStrategy.StrategySpec
	op := spec.DeploymentSpecs[0]
	second := *op.DeepCopy()
	second.Name = "subprovisioner-controller"
	second.Spec.Template.Spec.Containers[0].Image = newRef
	op.Spec.Template.Spec.Containers[0].Env = append(op.Spec.Template.Spec.Containers[0].Env,
		corev1.EnvVar{Name: "SUBPROVISIONER_CSI_IMAGE", Value: newRef})
	spec.DeploymentSpecs = []v1alpha1.StrategyDeploymentSpec{op, second}
	np := &unstructured.Unstructured{}
	np.SetAPIVersion("networking.k8s.io/v1")
	np.SetKind("NetworkPolicy")
	np.SetName("lvms-operator-allow")
	b.Objects = append(b.Objects, Object{File: "manifests/lvms-operator-allow_networking.k8s.io_v1_networkpolicy.yaml", Object: np})
	for _, o := range b.Objects {
		if o.Object.GetName() == "lvmclusters.lvm.topolvm.io" {
			if err := unstructured.SetNestedField(o.Object.Object, map[string]interface{}{"type": "string"},
				"spec", "versions", "0", "schema"); err == nil {
				t.Fatal("unexpected: versions is a list")
			}
			vs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "versions")
			v0 := vs[0].(map[string]interface{})
			_ = unstructured.SetNestedField(v0, map[string]interface{}{"type": "string", "enum": []interface{}{"shared", "exclusive"}},
				"schema", "openAPIV3Schema", "properties", "spec", "properties", "deviceAccessPolicy")
			_ = unstructured.SetNestedSlice(o.Object.Object, vs, "spec", "versions")
		}
	}

	r, err := Translate(b, eraNamed(t, "lvms-4.18"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var img *Image
	for i := range r.Images {
		if r.Images[i].Name == "subprovisioner-csi" {
			img = &r.Images[i]
		}
	}
	if img == nil || img.Key != "subprovisioner_csi" || !img.Undeclared || img.Ref != newRef {
		t.Fatalf("new relatedImage: got %+v in %+v", img, r.Images)
	}
	if !containsAll(strings.Join(r.Warnings, "\n"), "relatedImage subprovisioner-csi", `"subprovisioner_csi"`, "NetworkPolicy lvms-operator-allow") {
		t.Errorf("warnings do not name the new image and the NetworkPolicy:\n%s", strings.Join(r.Warnings, "\n"))
	}
	excluded := false
	for _, e := range r.Excluded {
		excluded = excluded || (e.Kind == "NetworkPolicy" && e.Name == "lvms-operator-allow")
	}
	if !excluded {
		t.Errorf("NetworkPolicy not reported as excluded: %+v", r.Excluded)
	}
	objs, err := yaml.Marshal(objectsOf(r))
	if err != nil {
		t.Fatal(err)
	}
	out := string(objs)
	for _, want := range []string{
		"image: '{{ .ReleaseImage.subprovisioner_csi }}'",
		"value: '{{ .ReleaseImage.subprovisioner_csi }}'",
		"name: subprovisioner-controller",
		"deviceAccessPolicy:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "sha256:1111") {
		t.Errorf("a literal digest of the new image reached an object:\n%s", out)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// TestTemplateEverywhere: a reference to a shipped image is templated wherever a shipped
// object carries it, whatever the env var is named, and by digest when another repository
// names the same image; a reference to an image that is not shipped is left for render's
// guard to refuse.
func TestTemplateEverywhere(t *testing.T) {
	const other = "quay.io/x/y@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	b, err := Load(filepath.Join("testdata", "bundles", "v4.18.4"))
	if err != nil {
		t.Fatal(err)
	}
	ref := b.CSV.Spec.RelatedImages[0].Image
	mirrored := "mirror.example.com/lvms/operator@" + ref[strings.LastIndex(ref, "@")+1:]
	dep := &b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template
	c := &dep.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "RELATED_IMAGE_OPERATOR", Value: ref}, corev1.EnvVar{Name: "OTHER", Value: other})
	c.Args = append(c.Args, "--operator-image="+ref, "--mirrored="+mirrored)
	dep.Annotations = map[string]string{"lvms.topolvm.io/images": `{"operator":"` + ref + `"}`}
	cm := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{"name": "images"}, "data": map[string]interface{}{"images.conf": "operator = " + ref + "\n"}}}
	b.Objects = append(b.Objects, Object{File: "manifests/images_v1_configmap.yaml", Object: cm})
	e := eraNamed(t, "lvms-4.18")
	e.BundleInclude = append(e.BundleInclude, era.Selector{Kind: "ConfigMap", Name: "images"})
	r, err := Translate(b, e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := yaml.Marshal(objectsOf(r))
	if err != nil {
		t.Fatal(err)
	}
	out := string(objs)
	const p = "{{ .ReleaseImage.lvms_operator }}"
	for _, want := range []string{
		"value: '" + p + "'",
		"--operator-image=" + p,
		"--mirrored=" + p,
		`'{"operator":"` + p + `"}'`,
		"images.conf: |\n      operator = " + p,
		"value: " + other,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ref) || strings.Contains(out, mirrored) {
		t.Errorf("a literal reference of a shipped image survived:\n%s", out)
	}
}

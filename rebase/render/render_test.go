package render

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// obj builds an unstructured object from YAML, failing the test on bad input.
func obj(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test object: %v\n%s", err, s)
	}
	return &unstructured.Unstructured{Object: m}
}

func crd(t testing.TB, group, plural, kind string) *unstructured.Unstructured {
	return obj(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: `+plural+`.`+group+`
spec:
  group: `+group+`
  names:
    kind: `+kind+`
    plural: `+plural+`
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`)
}

func sa(t testing.TB, name, ns string) *unstructured.Unstructured {
	return obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: "+name+"\n  namespace: "+ns+"\n")
}

func clusterRole(t testing.TB, name string) *unstructured.Unstructured {
	return obj(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: `+name+`
rules:
- apiGroups: [""]
  resources: [persistentvolumes]
  verbs: [get, list, watch]
`)
}

func versionCM(t testing.TB, v string) *unstructured.Unstructured {
	return obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lvms-version\n  namespace: kube-public\ndata:\n  version: "+v+"\n")
}

// lvmsObjects stands in for bundle.Translate's output of an era.
func lvmsObjects(t testing.TB, e era.Era) []*unstructured.Unstructured {
	if e.Driver == era.TopoLVM {
		return []*unstructured.Unstructured{
			versionCM(t, "v4.15.0"),
			sa(t, "topolvm-controller", "openshift-storage"),
			sa(t, "topolvm-node", "openshift-storage"),
			clusterRole(t, "topolvm-controller"),
			clusterRole(t, "topolvm-node"),
			crd(t, "topolvm.io", "logicalvolumes", "LogicalVolume"),
		}
	}
	return []*unstructured.Unstructured{
		versionCM(t, "v4.18.4"),
		sa(t, "lvms-operator", "openshift-storage"),
		sa(t, "vg-manager", "openshift-storage"),
		clusterRole(t, "lvms-operator"),
		crd(t, "topolvm.io", "logicalvolumes", "LogicalVolume"),
		crd(t, "lvm.topolvm.io", "lvmclusters", "LVMCluster"),
		obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: lvms-operator
  namespace: openshift-storage
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: lvms-operator
  template:
    metadata:
      labels:
        app.kubernetes.io/name: lvms-operator
    spec:
      containers:
      - name: manager
        image: '{{ .ReleaseImage.lvms_operator }}'
        command: [/lvms, operator]
`),
		obj(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vlvmcluster.kb.io-lvms-operator
  annotations:
    service.beta.openshift.io/inject-cabundle: "true"
webhooks:
- name: vlvmcluster.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service:
      name: lvms-webhook-service
      namespace: openshift-storage
      path: /validate-lvm-topolvm-io-v1alpha1-lvmcluster
`),
		obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: lvms-webhook-service
  namespace: openshift-storage
spec:
  ports:
  - {name: https, port: 443, targetPort: 9443}
  selector:
    app.kubernetes.io/name: lvms-operator
`),
	}
}

// snapshotObjects stands in for snapshot.Translate's output of an era: objects shaped like
// the operator's assets, which the era's snapshot overlay turns into MicroShift's.
func snapshotObjects(t testing.TB, e era.Era) []*unstructured.Unstructured {
	objs := []*unstructured.Unstructured{
		crd(t, "snapshot.storage.k8s.io", "volumesnapshots", "VolumeSnapshot"),
		sa(t, "csi-snapshot-controller", "${CONTROLPLANE_NAMESPACE}"),
		clusterRole(t, "openshift-csi-snapshot-controller-runner"),
		obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: csi-snapshot-controller
  namespace: ${CONTROLPLANE_NAMESPACE}
  annotations:
    release.openshift.io/desired-version: ${RELEASE_VERSION}
  labels:
    hypershift.openshift.io/managed-by: csi-snapshot-controller-operator
spec:
  selector:
    matchLabels:
      app: csi-snapshot-controller
  template:
    metadata:
      labels:
        app: csi-snapshot-controller
    spec:
      containers:
      - name: snapshot-controller
        image: ${OPERAND_IMAGE}
        args: [--v=2, --leader-election=true]
      priorityClassName: ${PRIORITY_CLASS}
`),
	}
	if e.SnapshotWebhook {
		objs = append(objs,
			sa(t, "csi-snapshot-webhook", "${CONTROLPLANE_NAMESPACE}"),
			obj(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: snapshot.storage.k8s.io
webhooks:
- name: volumesnapshotclasses.snapshot.storage.k8s.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service:
      name: csi-snapshot-webhook
      namespace: openshift-cluster-storage-operator
`),
			obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: csi-snapshot-webhook
  namespace: ${CONTROLPLANE_NAMESPACE}
spec:
  ports:
  - {name: webhook, port: 443, targetPort: 8443}
  selector:
    app: csi-snapshot-webhook
`),
			obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: csi-snapshot-webhook
  namespace: ${CONTROLPLANE_NAMESPACE}
spec:
  selector:
    matchLabels:
      app: csi-snapshot-webhook
  template:
    metadata:
      labels:
        app: csi-snapshot-webhook
    spec:
      containers:
      - name: webhook
        image: ${OPERAND_IMAGE}
        args: [--v=2, --port=8443]
      priorityClassName: ${PRIORITY_CLASS}
`))
	}
	return objs
}

func input(t testing.TB, e era.Era) Input {
	return Input{Era: e, Kustomize: lvmsrebase.Kustomize, LVMS: lvmsObjects(t, e), Snapshot: snapshotObjects(t, e)}
}

// TestGolden renders every era of the era table and compares each file with
// testdata/golden/<era>/<path>; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, e := range era.Table() {
		t.Run(e.Name, func(t *testing.T) {
			out, err := Render(input(t, e))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "golden", e.Name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				for _, f := range out.Files {
					p := filepath.Join(dir, filepath.FromSlash(f.Path))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := map[string][]byte{}
			err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				want[filepath.ToSlash(rel)] = b
				return err
			})
			if err != nil {
				t.Fatalf("reading golden (run with -update to create): %v", err)
			}
			got := out.Map()
			for p, w := range want {
				g, ok := got[p]
				if !ok {
					t.Errorf("missing file %s", p)
				} else if !bytes.Equal(g, w) {
					t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", p, g, w)
				}
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("unexpected file %s", p)
				}
			}
		})
	}
}

// TestMicroShiftNames checks the file names of objects MicroShift ships in each era.
func TestMicroShiftNames(t *testing.T) {
	cases := []struct {
		ocp          string
		want, absent []string
	}{
		{"4.14", []string{"assets/components/lvms/topolvm-node_daemonset.yaml"},
			[]string{"assets/components/lvms/topolvm-configmap_lvms-version.yaml"}},
		{"4.15", []string{
			"assets/components/lvms/csi-driver.yaml",
			"assets/components/lvms/topolvm-configmap_lvms-version.yaml",
			"assets/components/lvms/topolvm-controller_deployment.yaml",
			"assets/components/lvms/topolvm-controller_rbac.authorization.k8s.io_v1_clusterrole.yaml",
			"assets/components/lvms/topolvm-controller_v1_serviceaccount.yaml",
			"assets/components/lvms/topolvm-lvmd-config_configmap_v1.yaml",
			"assets/components/lvms/topolvm-node-scc_rbac.authorization.k8s.io_v1_clusterrole.yaml",
			"assets/components/lvms/topolvm-node-scc_rbac.authorization.k8s.io_v1_clusterrolebinding.yaml",
			"assets/components/lvms/topolvm-node-securitycontextconstraint.yaml",
			"assets/components/lvms/topolvm-node_daemonset.yaml",
			"assets/components/lvms/topolvm-openshift-storage_namespace.yaml",
			"assets/components/lvms/topolvm.io_logicalvolumes.yaml",
			"assets/components/lvms/topolvm_default-storage-class.yaml",
			"assets/components/csi-snapshot-controller/webhook_config.yaml",
			"assets/components/csi-snapshot-controller/webhook_serviceaccount.yaml",
			"assets/components/csi-snapshot-controller/csi_controller_deployment.yaml",
		}, nil},
		{"4.18", []string{
			"assets/components/lvms/lvms_default-lvmcluster.yaml",
			"assets/components/lvms/lvm.topolvm.io_lvmclusters.yaml",
			"assets/components/lvms/lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml",
			"assets/components/lvms/lvms-operator_apps_v1_deployment.yaml",
			"assets/components/lvms/lvms-operator_v1_serviceaccount.yaml",
			"assets/components/lvms/topolvm-openshift-storage_namespace.yaml",
			"assets/components/lvms/topolvm_default-storage-class.yaml",
			"assets/components/csi-snapshot-controller/clusterrole.yaml",
			"assets/components/csi-snapshot-controller/serviceaccount.yaml",
			"assets/components/csi-snapshot-controller/volumesnapshots.yaml",
		}, []string{"assets/components/csi-snapshot-controller/webhook_config.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.ocp, func(t *testing.T) {
			e, err := era.For(tc.ocp)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Render(input(t, e))
			if err != nil {
				t.Fatal(err)
			}
			got := out.Map()
			for _, p := range tc.want {
				if _, ok := got[p]; !ok {
					t.Errorf("missing %s; have %v", p, keys(got))
				}
			}
			for _, p := range tc.absent {
				if _, ok := got[p]; ok {
					t.Errorf("unexpected %s", p)
				}
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestContent checks the properties MicroShift's runtime depends on.
func TestContent(t *testing.T) {
	cases := []struct {
		ocp, file string
		want      []string
		notWant   []string
	}{
		{"4.16", "assets/components/lvms/topolvm-node_daemonset.yaml",
			[]string{"lvms.microshift.io/lvmd_config_sha256sum: '{{ Sha256sum .lvmd }}'", "- --embed-lvmd", "image: '{{ .ReleaseImage.topolvm_csi }}'"},
			[]string{"SocketName", "name: lvmd\n        resources"}},
		{"4.14", "assets/components/lvms/topolvm-node_daemonset.yaml",
			[]string{"- --lvmd-socket={{ .SocketName }}", "path: '{{ Dir .SocketName }}'", "- /lvmd", "lvmd_config_sha256sum"},
			[]string{"--embed-lvmd"}},
		{"4.15", "assets/components/lvms/topolvm-node_daemonset.yaml",
			[]string{"- --lvmd-socket={{ .SocketName }}", "- /lvmd"}, []string{"--embed-lvmd"}},
		{"4.15", "assets/components/lvms/topolvm-configmap_lvms-version.yaml", []string{"version: v4.15.0"}, nil},
		{"4.16", "assets/components/lvms/topolvm-controller_deployment.yaml",
			[]string{"image: '{{ .ReleaseImage.openssl }}'", "image: '{{ .ReleaseImage.csi_external_snapshotter }}'"}, nil},
		{"4.17", "assets/components/lvms/lvms_default-lvmcluster.yaml",
			[]string{"apiVersion: lvm.topolvm.io/v1alpha1\nkind: LVMCluster\nmetadata:\n  name: lvms\n  namespace: openshift-storage\n"}, []string{"spec"}},
		{"4.20", "assets/components/lvms/topolvm-openshift-storage_namespace.yaml",
			[]string{`openshift.io/run-level: "0"`, "pod-security.kubernetes.io/enforce: privileged", "workload.openshift.io/allowed: management"}, nil},
		{"4.18", "assets/components/lvms/topolvm_default-storage-class.yaml",
			[]string{`storageclass.kubernetes.io/is-default-class: "true"`, "volumeBindingMode: WaitForFirstConsumer", "allowVolumeExpansion: true", "csi.storage.k8s.io/fstype: xfs"}, nil},
		{"4.18", "assets/components/lvms/lvms-operator_apps_v1_deployment.yaml",
			[]string{"image: '{{ .ReleaseImage.lvms_operator }}'"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.ocp+"/"+filepath.Base(tc.file), func(t *testing.T) {
			e, err := era.For(tc.ocp)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Render(input(t, e))
			if err != nil {
				t.Fatal(err)
			}
			b, ok := out.Map()[tc.file]
			if !ok {
				t.Fatalf("no file %s", tc.file)
			}
			s := string(b)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("%s lacks %q:\n%s", tc.file, w, s)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(s, w) {
					t.Errorf("%s has %q:\n%s", tc.file, w, s)
				}
			}
			if !strings.HasSuffix(s, "\n") || strings.Count(s, "\nkind:")+strings.Count(s[:min(len(s), 5)], "kind:") != 1 {
				t.Errorf("%s: expected exactly one object ending in a newline:\n%s", tc.file, s)
			}
		})
	}
}

// TestDeterministic renders with the generated objects in reverse order and expects the
// same bytes.
func TestDeterministic(t *testing.T) {
	e, err := era.For("4.17")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Render(input(t, e))
	if err != nil {
		t.Fatal(err)
	}
	in := input(t, e)
	for i, j := 0, len(in.LVMS)-1; i < j; i, j = i+1, j-1 {
		in.LVMS[i], in.LVMS[j] = in.LVMS[j], in.LVMS[i]
	}
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != len(b.Files) {
		t.Fatalf("%d files vs %d", len(a.Files), len(b.Files))
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path || !bytes.Equal(a.Files[i].Data, b.Files[i].Data) {
			t.Errorf("file %d differs: %s vs %s", i, a.Files[i].Path, b.Files[i].Path)
		}
	}
	if want := []string{SnapshotDir, LVMSDir}; strings.Join(a.ManagedDirs, ",") != strings.Join(want, ",") {
		t.Errorf("ManagedDirs = %v, want %v", a.ManagedDirs, want)
	}
}

// TestPartsJoinToRender: every era's two overlays rendered apart (each from its own staging
// tree, the LVMS part without the snapshot objects and the other way round) and joined give
// Render's output, files, managed directories and image uses; a part names its own errors.
func TestPartsJoinToRender(t *testing.T) {
	for _, e := range era.Table() {
		t.Run(e.Name, func(t *testing.T) {
			in := input(t, e)
			want, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			lvms, err := RenderPart(Input{Era: e, Kustomize: in.Kustomize, LVMS: in.LVMS}, LVMSPart)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := RenderPart(Input{Era: e, Kustomize: in.Kustomize, Snapshot: in.Snapshot}, SnapshotPart)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Join(e, in.Aggregates, lvms, snap)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("joined parts differ from Render (-Render +joined):\n%s", diff)
			}
		})
	}
	e, err := era.For("4.17")
	if err != nil {
		t.Fatal(err)
	}
	noSnapNames := e
	noSnapNames.OCPEra = "no-such-ocp-era"
	if _, err := RenderPart(Input{Era: noSnapNames, Kustomize: lvmsrebase.Kustomize, LVMS: lvmsObjects(t, e)}, LVMSPart); err != nil {
		t.Errorf("the LVMS part needs no snapshot name table: %v", err)
	}
	if _, err := RenderPart(Input{Era: noSnapNames, Kustomize: lvmsrebase.Kustomize}, SnapshotPart); err == nil || !strings.Contains(err.Error(), "no-such-ocp-era") {
		t.Errorf("snapshot part without a name table: %v, want an error naming the OCP era", err)
	}
}

func TestErrors(t *testing.T) {
	e417, _ := era.For("4.17")
	e418, _ := era.For("4.18")
	cases := []struct {
		name    string
		in      func(t *testing.T) Input
		wantErr string
	}{
		{"unknown era", func(t *testing.T) Input {
			in := input(t, e417)
			in.Era.Name = "lvms-9.99"
			return in
		}, `"lvms-9.99": no file name table`},
		{"no kustomize tree", func(t *testing.T) Input {
			in := input(t, e417)
			in.Kustomize = nil
			return in
		}, "no kustomize tree"},
		{"missing overlay", func(t *testing.T) Input {
			in := input(t, e417)
			in.Era.LVMSOverlay = "overlays/lvms/9.99"
			return in
		}, "overlays/lvms/9.99"},
		{"two objects, one file name", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, sa(t, "lvms-operator", "other-namespace"))
			return in
		}, "both map to file assets/components/lvms/lvms-operator_v1_serviceaccount.yaml"},
		{"duplicate object", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, sa(t, "lvms-operator", "openshift-storage"))
			return in
		}, "kustomize build overlays/lvms/4.17"},
		{"generated object clashes with base", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, obj(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-storage\n"))
			return in
		}, "kustomize build overlays/lvms/4.17"},
		{"namespace outside the era's", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, sa(t, "lvms-extra", "openshift-lvm-storage"))
			return in
		}, `ServiceAccount "lvms-extra": namespace "openshift-lvm-storage", expected one of ["openshift-storage" "kube-public"]`},
		{"namespaced object without namespace", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
			return in
		}, `ConfigMap "x": namespace ""`},
		{"upstream template variable left by the snapshot overlay", func(t *testing.T) Input {
			in := input(t, e417)
			in.Snapshot = append(in.Snapshot, obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: kube-system\ndata:\n  level: --v=${NEW_LEVEL}\n  ${KEY}: v\n"))
			return in
		}, "upstream template variables left after the overlay (patch them in overlays/csi-snapshot-controller/4.14/kustomization.yaml; " +
			"a substring inside a value is filled by the snapshot translation's template values): " +
			"assets/components/csi-snapshot-controller/x_v1_configmap.yaml: ConfigMap x field data.level: ${NEW_LEVEL}; " +
			"assets/components/csi-snapshot-controller/x_v1_configmap.yaml: ConfigMap x key data.${KEY}: ${KEY}"},
		{"snapshot patch target renamed upstream", func(t *testing.T) Input {
			in := input(t, e418)
			for _, o := range in.Snapshot {
				if o.GetKind() == "Deployment" {
					o.SetName("csi-snapshot-controller-renamed")
				}
			}
			return in
		}, "overlays/csi-snapshot-controller/4.18/kustomization.yaml: patches[2]: target Deployment csi-snapshot-controller matches no object of the build: upstream renamed or removed it"},
		{"snapshot webhook patch target gone, through the overlay 4.14 builds on", func(t *testing.T) Input {
			in := input(t, e417)
			in.Snapshot = slices.DeleteFunc(in.Snapshot, func(o *unstructured.Unstructured) bool {
				return o.GetName() == "csi-snapshot-controller" && o.GetKind() == "Deployment"
			})
			return in
		}, "overlays/csi-snapshot-controller/4.18/kustomization.yaml: patches[2]: target Deployment csi-snapshot-controller matches no object"},
		{"snapshot container renamed upstream", func(t *testing.T) Input {
			in := input(t, e418)
			for _, o := range in.Snapshot {
				if o.GetKind() == "Deployment" {
					c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					c[0].(map[string]interface{})["name"] = "controller"
					_ = unstructured.SetNestedSlice(o.Object, c, "spec", "template", "spec", "containers")
				}
			}
			return in
		}, "testing value /spec/template/spec/containers/0/name failed"},
		{"cluster-scoped object with namespace", func(t *testing.T) Input {
			in := input(t, e417)
			in.LVMS = append(in.LVMS, obj(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: x\n  namespace: openshift-storage\n"))
			return in
		}, `ClusterRole "x" is cluster-scoped but has namespace "openshift-storage"`},
		{"snapshot webhook after its removal", func(t *testing.T) Input {
			in := input(t, e418)
			in.Snapshot = snapshotObjects(t, e417)
			return in
		}, "ships no snapshot validation webhook"},
		{"object without name", func(t *testing.T) Input {
			in := input(t, e417)
			in.Snapshot = append(in.Snapshot, obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: kube-system\n"))
			return in
		}, "kustomize build"},
		{"staging dir not empty", func(t *testing.T) Input {
			in := input(t, e417)
			in.StagingDir = t.TempDir()
			if err := os.WriteFile(filepath.Join(in.StagingDir, "x"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return in
		}, "expected an empty or absent directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.in(t))
			if err == nil {
				t.Fatalf("expected error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestDefaultFileName(t *testing.T) {
	cases := []struct {
		apiVersion, kind, name, want, wantErr string
	}{
		{"v1", "ServiceAccount", "vg-manager", "vg-manager_v1_serviceaccount.yaml", ""},
		{"apps/v1", "Deployment", "lvms-operator", "lvms-operator_apps_v1_deployment.yaml", ""},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "topolvm-node", "topolvm-node_rbac.authorization.k8s.io_v1_clusterrole.yaml", ""},
		{"lvm.topolvm.io/v1alpha1", "LVMVolumeGroup", "x", "x_lvm.topolvm.io_v1alpha1_lvmvolumegroup.yaml", ""},
		{"v1", "ConfigMap", "", "", "expected apiVersion, kind and metadata.name"},
		{"a/b/c", "ConfigMap", "x", "", "apiVersion"},
		{"v1", "ConfigMap", "../x", "", "cannot be used as a file name"},
	}
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			got, err := DefaultFileName(tc.apiVersion, tc.kind, tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestNameTables requires a name table for every era and no two rules of a component
// naming the same file.
func TestNameTables(t *testing.T) {
	check := func(what string, rules []NameRule) {
		files := map[string]bool{}
		for _, r := range rules {
			if files[r.File] {
				t.Errorf("%s: file %s named twice", what, r.File)
			}
			files[r.File] = true
		}
	}
	for _, r := range era.LVMSTable {
		nt, ok := NameTables[r.Name]
		if !ok {
			t.Errorf("LVMS era %s has no name table", r.Name)
		}
		check(r.Name, nt.LVMS)
	}
	for _, r := range era.OCPTable {
		rules, ok := SnapshotNameTables[r.Name]
		if !ok {
			t.Errorf("OCP era %s has no snapshot name table", r.Name)
		}
		check(r.Name, rules)
	}
}

// TestStagingKept checks that a given staging directory is kept and is a plain kustomize
// tree with the generated resource directories.
func TestStagingKept(t *testing.T) {
	e, _ := era.For("4.18")
	in := input(t, e)
	in.StagingDir = filepath.Join(t.TempDir(), "staging")
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"base/lvms/kustomization.yaml", "overlays/lvms/4.18/kustomization.yaml",
		GeneratedLVMSDir + "/kustomization.yaml", GeneratedSnapshotDir + "/kustomization.yaml"} {
		if _, err := os.Stat(filepath.Join(in.StagingDir, p)); err != nil {
			t.Error(err)
		}
	}
}

// KustomizeEnv names the stock kustomize CLI TestKubectlKustomize runs (`make test` builds it
// into $TOOLS_DIR and sets it, hack/build-kustomize.sh).
const KustomizeEnv = "KUSTOMIZE_BIN"

// stockKustomize finds a stock kustomize: $KUSTOMIZE_BIN, else kubectl or kustomize on PATH,
// else one `make kustomize` built into $TOOLS_DIR. It returns the command line that builds a
// directory given as its last argument.
func stockKustomize() ([]string, error) {
	if bin := os.Getenv(KustomizeEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s=%s: %w (run `make kustomize`)", KustomizeEnv, bin, err)
		}
		return []string{bin, "build"}, nil
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return []string{p, "kustomize"}, nil
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		return []string{p, "build"}, nil
	}
	if dir := os.Getenv("TOOLS_DIR"); dir != "" {
		if found, _ := filepath.Glob(filepath.Join(dir, "kustomize-v*", "kustomize")); len(found) > 0 {
			return []string{found[len(found)-1], "build"}, nil
		}
	}
	return nil, fmt.Errorf("no stock kustomize: %s is not set, neither kubectl nor kustomize is on PATH, and $TOOLS_DIR has no "+
		"kustomize-<version>/kustomize; run `make kustomize` (or the tests through `make test`), or `go test -short` to skip", KustomizeEnv)
}

// TestKubectlKustomize builds every overlay of every era with a stock kustomize (kubectl
// kustomize, or the kustomize CLI) and requires output identical to the in-process build:
// the staging tree is a plain kustomize tree a maintainer can build by hand. Without a stock
// kustomize it fails (a skipped parity check would let a krusty-only difference pass); under
// -short it is skipped.
func TestKubectlKustomize(t *testing.T) {
	if testing.Short() {
		t.Skip("parity with a stock kustomize skipped under -short")
	}
	stock, err := stockKustomize()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stock kustomize: %s", strings.Join(stock, " "))
	for _, e := range era.Table() {
		t.Run(e.Name, func(t *testing.T) {
			in := input(t, e)
			staging := t.TempDir()
			if err := Stage(staging, in.Kustomize, in.LVMS, in.Snapshot); err != nil {
				t.Fatal(err)
			}
			for _, overlay := range []string{e.LVMSOverlay, e.SnapshotOverlay} {
				rm, err := Build(staging, overlay)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rm.AsYaml()
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(stock[0], append(stock[1:], filepath.Join(staging, overlay))...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				want, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", strings.Join(stock, " "), overlay, err, stderr.String())
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: krusty output differs from %s:\n--- krusty\n%s\n--- stock\n%s", overlay, strings.Join(stock, " "), got, want)
				}
			}
		})
	}
}

// BenchmarkRender measures one render of the 4.18 era (staging, two krusty builds, split).
func BenchmarkRender(b *testing.B) {
	e, err := era.For("4.18")
	if err != nil {
		b.Fatal(err)
	}
	in := input(b, e)
	for i := 0; i < b.N; i++ {
		if _, err := Render(in); err != nil {
			b.Fatal(err)
		}
	}
}

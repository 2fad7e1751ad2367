package applier

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// create makes an object on the test API server as manager would (no applied-hash annotation),
// with body as its top-level fields besides apiVersion, kind and metadata.
func (e *env) create(ref ObjectRef, manager string, body map[string]any, mutate ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
	e.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range body {
		u.Object[k] = v
	}
	u.SetAPIVersion(schema.GroupVersion{Group: ref.Group, Version: ref.Version}.String())
	u.SetKind(ref.Kind)
	u.SetName(ref.Name)
	u.SetNamespace(ref.Namespace)
	for _, m := range mutate {
		m(u)
	}
	out, err := e.ri(ref).Create(context.Background(), u, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		e.t.Fatalf("creating %s: %v", ref, err)
	}
	return out
}

var (
	storageNamespaceRef = ObjectRef{Version: "v1", Kind: "Namespace", Name: StorageNamespace}
	topolvmPVRef        = ObjectRef{Version: "v1", Kind: "PersistentVolume", Name: "pvc-1"}
)

// topolvmPV is a PersistentVolume TopoLVM provisioned.
func (e *env) topolvmPV() {
	e.t.Helper()
	e.create(topolvmPVRef, "kube-controller-manager", map[string]any{"spec": map[string]any{
		"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "storageClassName": "topolvm-provisioner",
		"csi": map[string]any{"driver": "topolvm.io", "volumeHandle": "abc", "fsType": "xfs"},
	}})
}

// olmDeployment is the lvms-operator Deployment as OLM would create it.
var olmDeployment = map[string]any{"spec": map[string]any{
	"selector": map[string]any{"matchLabels": map[string]any{"app": "lvms-operator"}},
	"template": map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "lvms-operator"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "manager", "image": "olm.example/lvms-operator:v4.18"}}},
	},
}}

// An LVMS installed through OLM — the same names in openshift-storage, created by another field
// manager, without the applied-hash annotation — survives Prune and is reported by name.
func TestPruneLeavesForeignObjects(t *testing.T) {
	e := newEnv(t)
	e.create(storageNamespaceRef, "olm", nil)
	olm := []ObjectRef{
		lvmsOperatorRef,
		{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "lvms-operator"},
		rbac("ClusterRole", "", "lvms-operator"),
		rbac("Role", StorageNamespace, "lvms-operator"),
	}
	for _, r := range olm {
		body := map[string]any(nil)
		if r.Kind == "Deployment" {
			body = olmDeployment
		}
		e.create(r, "catalog", body)
	}
	o := testOptions(t, "4.18")
	o.Storage.Driver, o.Prune = DriverNone, true
	res := e.apply(o)
	if len(res.Deleted) != 0 || len(res.Remaining) != 0 {
		t.Errorf("prune of a foreign LVMS: deleted %v, remaining %v", refsNamed(res.Deleted), refsNamed(res.Remaining))
	}
	for _, r := range olm {
		e.mustGet(r)
		if !slices.ContainsFunc(res.Foreign, r.SameObject) {
			t.Errorf("%s not reported as foreign: %v", r, refsNamed(res.Foreign))
		}
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, NotOwnedReason) && strings.Contains(w, lvmsOperatorRef.String())
	}) {
		t.Errorf("warnings %q do not name the foreign objects", res.Warnings)
	}

	// An era change's clean-up (4.17 deletes TopoLVM's objects) spares a topolvm-node someone
	// else deployed. The OLM install is removed first: its Deployment's selector is immutable.
	for _, r := range olm {
		if err := e.ri(r).Delete(context.Background(), r.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	foreignNode := daemonSetRef(StorageNamespace, "topolvm-node")
	e.create(foreignNode, "helm", olmDeployment)
	o = testOptions(t, "4.17")
	res = e.apply(o)
	e.mustGet(foreignNode)
	if slices.ContainsFunc(res.Deleted, foreignNode.SameObject) || !slices.ContainsFunc(res.Foreign, foreignNode.SameObject) {
		t.Errorf("era change: deleted %v, foreign %v", refsNamed(res.Deleted), refsNamed(res.Foreign))
	}
}

// Prune refuses while a PersistentVolume of topolvm.io exists and deletes nothing; ForcePrune
// goes ahead. PVs, claims, CRDs and StorageClasses stay either way.
func TestPruneRefusedWithVolumes(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	e.apply(o)
	e.topolvmPV()

	o.Storage.Driver, o.Prune = DriverNone, true
	var c counter
	o.RESTConfig = c.wrap(e.cfg)
	ctx := context.Background()
	res, err := Apply(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "prune refused") || !strings.Contains(err.Error(), "PersistentVolumes pvc-1") {
		t.Fatalf("prune with a PV: %v, want a refusal naming pvc-1", err)
	}
	if _, muts := c.snapshot(); len(muts) != 0 || len(res.Deleted) != 0 {
		t.Errorf("refused prune wrote %v, deleted %v", muts, refsNamed(res.Deleted))
	}
	if !slices.ContainsFunc(res.Remaining, lvmsOperatorRef.SameObject) || res.Components[0].Err == nil || res.Components[1].Err != nil {
		t.Errorf("remaining %v, components %+v", refsNamed(res.Remaining), res.Components)
	}
	e.mustGet(lvmsOperatorRef)

	o.ForcePrune = true
	o.RESTConfig = e.cfg
	res = e.apply(o)
	if !slices.ContainsFunc(res.Deleted, lvmsOperatorRef.SameObject) {
		t.Errorf("forced prune deleted %v", refsNamed(res.Deleted))
	}
	for _, keep := range []ObjectRef{topolvmPVRef, lvmClusterRef, storageNamespaceRef,
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Name: "topolvm-provisioner"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "logicalvolumes.topolvm.io"},
	} {
		e.mustGet(keep)
	}
}

// The snapshot controller switched off after it ran is reported by name; Prune removes it and
// its identity and RBAC, never the snapshot CRDs, and leaves storage alone.
func TestSnapshotControllerSwitchedOff(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	e.apply(o)
	o.Storage.OptionalCSIComponents = []string{ComponentNone}
	res := e.apply(o)
	if len(res.Deleted) != 0 || !slices.ContainsFunc(res.Remaining, snapshotControllerRef.SameObject) {
		t.Fatalf("switched off without prune: deleted %v remaining %v", refsNamed(res.Deleted), refsNamed(res.Remaining))
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, SnapshotComponent+" is switched off") && strings.Contains(w, snapshotControllerRef.String())
	}) {
		t.Errorf("warnings %q do not name the snapshot controller", res.Warnings)
	}
	e.mustGet(snapshotControllerRef)

	o.Prune = true
	res = e.apply(o)
	if !slices.Equal(refsNamed(res.Deleted), refsNamed(res.Remaining)) || !slices.ContainsFunc(res.Deleted, snapshotControllerRef.SameObject) {
		t.Errorf("prune deleted %v, remaining %v", refsNamed(res.Deleted), refsNamed(res.Remaining))
	}
	if _, ok := e.get(snapshotControllerRef); ok {
		t.Error("snapshot controller still exists after prune")
	}
	e.mustGet(lvmsOperatorRef)
	e.mustGet(ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "volumesnapshots.snapshot.storage.k8s.io"})
	if res = e.apply(o); len(res.Deleted)+len(res.Remaining) != 0 {
		t.Errorf("second prune: deleted %v remaining %v", refsNamed(res.Deleted), refsNamed(res.Remaining))
	}
}

// designLvmd is the lvmd.yaml of MicroShift's design: a thick default device class and a thin
// one that is not the default.
const designLvmd = `device-classes:
- name: thick
  volume-group: rhel
  default: true
  spare-gb: 10
- name: thin
  volume-group: rhel
  type: thin
  thin-pool:
    name: thinpool
    overprovision-ratio: 10
`

// Any thin device class gets the default VolumeSnapshotClass; prune removes it only while no
// VolumeSnapshot uses it.
func TestSnapshotClassForThinNonDefault(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	mustWriteFile(t, o.LvmdPath, []byte(designLvmd), 0o644)
	res := e.apply(o)
	if !slices.ContainsFunc(res.Created, defaultVSCRef.SameObject) {
		t.Fatalf("created %v, want %s", refsNamed(res.Created), defaultVSCRef)
	}
	vsc := e.mustGet(defaultVSCRef)
	if vsc.Object["driver"] != "topolvm.io" || vsc.Object["deletionPolicy"] != "Delete" || vsc.GetAnnotations()[DefaultClassAnnotation] != "true" {
		t.Errorf("VolumeSnapshotClass = %v", vsc.Object)
	}
	e.assertNoop(o, res)

	vs := ObjectRef{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshot", Namespace: "default", Name: "snap"}
	e.create(vs, "kubectl", map[string]any{"spec": map[string]any{
		"volumeSnapshotClassName": DefaultSnapshotClassName, "source": map[string]any{"persistentVolumeClaimName": "data"},
	}})
	o.Storage.Driver, o.Prune = DriverNone, true
	res = e.apply(o)
	if _, ok := e.get(defaultVSCRef); !ok || slices.ContainsFunc(res.Deleted, defaultVSCRef.SameObject) {
		t.Errorf("class deleted while a VolumeSnapshot uses it (deleted %v)", refsNamed(res.Deleted))
	}
	if err := e.ri(vs).Delete(context.Background(), vs.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res = e.apply(o)
	if !slices.ContainsFunc(res.Deleted, defaultVSCRef.SameObject) {
		t.Errorf("unused class not pruned: deleted %v", refsNamed(res.Deleted))
	}
}

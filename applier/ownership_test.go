package applier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
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
	// Remaining lists what the prune left: nothing (it listed the deleted objects before).
	if len(res.Remaining) != 0 || len(res.Kept) != 0 || !slices.ContainsFunc(res.Deleted, snapshotControllerRef.SameObject) {
		t.Errorf("prune deleted %v, remaining %v, kept %v", refsNamed(res.Deleted), refsNamed(res.Remaining), res.Kept)
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

// recreate deletes ref and creates it again as someone else would, from the live object's
// content (so only what mutate changes differs), by manager with a plain create (an Update
// entry) or, when apply, a server-side apply.
func (e *env) recreate(ref ObjectRef, manager string, apply bool, mutate func(u *unstructured.Unstructured)) {
	e.t.Helper()
	ctx := context.Background()
	live := e.mustGet(ref)
	if err := e.ri(ref).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	for i := 0; ; i++ { // background deletion of objects with dependents takes a moment
		if _, ok := e.get(ref); !ok {
			break
		}
		if i > 100 {
			e.t.Fatalf("%s not deleted", ref)
		}
		time.Sleep(50 * time.Millisecond)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range live.Object {
		if k != "metadata" && k != "status" {
			u.Object[k] = v
		}
	}
	u.SetAPIVersion(live.GetAPIVersion())
	u.SetKind(live.GetKind())
	u.SetName(live.GetName())
	u.SetNamespace(live.GetNamespace())
	u.SetLabels(live.GetLabels())
	u.SetAnnotations(live.GetAnnotations())
	mutate(u)
	var err error
	if apply {
		_, err = e.ri(ref).Apply(ctx, ref.Name, u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	} else {
		_, err = e.ri(ref).Create(ctx, u, metav1.CreateOptions{FieldManager: manager})
	}
	if err != nil {
		e.t.Fatalf("re-creating %s as %s: %v", ref, manager, err)
	}
}

// keptReason is the reason res gives for leaving ref on the cluster, "" when it gives none.
func keptReason(res *Result, ref ObjectRef) string {
	for _, k := range res.Kept {
		if k.Object.SameObject(ref) {
			return k.Reason
		}
	}
	return ""
}

// Prune deletes only what it can prove MicroShift's: the applier's Apply entry with content
// matching the applied-hash, or the operator's object controlled by MicroShift's LVMCluster.
// Each hostile look-alike survives, is reported in Foreign and Kept with the proof that failed,
// and Remaining lists nothing that was deleted. (On the code before, every one of them was
// deleted: the annotation, the manager name "microshift" or a controller reference to anything
// applied was proof enough.)
func TestPruneDeletesOnlyProvenObjects(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	e.apply(o)
	e.vgManagerOf() // the operator's DaemonSet, controlled by MicroShift's LVMCluster
	ns := e.mustGet(storageNamespaceRef)

	hostile := map[ObjectRef]string{}
	// kubectl's ClusterRole that OLM labels as its own, our applied-hash copied onto it.
	olmRole := rbac("ClusterRole", "", "lvms-operator")
	e.recreate(olmRole, "kubectl-create", false, func(u *unstructured.Unstructured) {
		u.SetLabels(map[string]string{"olm.owner": "lvms-operator.v4.18.0", "olm.owner.kind": "ClusterServiceVersion"})
	})
	hostile[olmRole] = "installed through OLM (label olm.owner=lvms-operator.v4.18.0)"
	// Clients calling themselves microshift: one server-side applies, one writes other rules.
	applyNamed := rbac("ClusterRole", "", "vg-manager")
	e.recreate(applyNamed, "microshift", true, func(*unstructured.Unstructured) {})
	hostile[applyNamed] = `no "microshift" Update entry`
	otherRules := rbac("Role", StorageNamespace, "vg-manager")
	e.recreate(otherRules, "microshift", false, func(u *unstructured.Unstructured) {
		u.Object["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}
	})
	hostile[otherRules] = "not the Role MicroShift shipped: rules[0] differs"
	// MicroShift's own Role plus one rule, and its binding plus one subject, by a client calling
	// itself microshift: MicroShift's content is in them, but they hold more than any era
	// shipped. (Before, both were deleted: the proof was "contains what MicroShift shipped".)
	plusRule := rbac("Role", StorageNamespace, "lvms-metrics")
	e.recreate(plusRule, "microshift", false, func(u *unstructured.Unstructured) {
		u.Object["rules"] = append(slices.Clone(u.Object["rules"].([]any)), map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}})
	})
	hostile[plusRule] = fmt.Sprintf("not the Role MicroShift shipped: rules[%d] is not in what any era shipped", len(e.mustGet(plusRule).Object["rules"].([]any))-1)
	plusSubject := rbac("RoleBinding", StorageNamespace, "vg-manager")
	e.recreate(plusSubject, "microshift", false, func(u *unstructured.Unstructured) {
		u.Object["subjects"] = append(slices.Clone(u.Object["subjects"].([]any)), map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "default"})
	})
	hostile[plusSubject] = "not the RoleBinding MicroShift shipped: subjects[1] is not in what any era shipped"
	// The same binding as MicroShift's code before the applier left it: proven, deleted.
	legacyBinding := rbac("ClusterRoleBinding", "", "vg-manager")
	e.recreate(legacyBinding, "microshift", false, func(*unstructured.Unstructured) {})
	// Controlled by our Namespace: not a workload MicroShift applied.
	nsOwned := ObjectRef{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "vg-manager"}
	e.recreate(nsOwned, "someone", false, func(u *unstructured.Unstructured) {
		yes := true
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.GetName(), UID: ns.GetUID(), Controller: &yes}})
	})
	hostile[nsOwned] = "no server-side apply by microshift-storage"
	// MicroShift's Role, one rule edited by hand since.
	edited := rbac("Role", StorageNamespace, "lvms-operator")
	role := e.mustGet(edited)
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	rules[0].(map[string]any)["verbs"] = []any{"*"}
	if err := unstructured.SetNestedSlice(role.Object, rules, "rules"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ri(edited).Update(context.Background(), role, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	hostile[edited] = "changed since microshift-storage applied it"

	o.Storage.Driver, o.Prune = DriverNone, true
	res := e.apply(o)
	for ref, want := range hostile {
		e.mustGet(ref)
		if !slices.ContainsFunc(res.Foreign, ref.SameObject) {
			t.Errorf("%s not reported as foreign", ref)
		}
		if got := keptReason(res, ref); !strings.Contains(got, want) {
			t.Errorf("%s kept for %q, want a reason containing %q", ref, got, want)
		}
		if slices.ContainsFunc(res.Remaining, ref.SameObject) {
			t.Errorf("foreign %s listed as remaining", ref)
		}
	}
	for _, ref := range []ObjectRef{lvmsOperatorRef, daemonSetRef(StorageNamespace, "vg-manager"), rbac("ClusterRoleBinding", "", "lvms-operator"), legacyBinding} {
		if !slices.ContainsFunc(res.Deleted, ref.SameObject) {
			t.Errorf("%s not deleted: deleted %v, kept %v", ref, refsNamed(res.Deleted), res.Kept)
		}
	}
	for _, r := range res.Remaining {
		if slices.ContainsFunc(res.Deleted, r.SameObject) {
			t.Errorf("%s both deleted and remaining", r)
		}
	}
	if len(res.Remaining) != 0 {
		t.Errorf("remaining after a prune that deleted everything proven: %v", refsNamed(res.Remaining))
	}
}

// The start-up migrations delete what MicroShift's code before the applier created (4.16's
// TopoLVM, by library-go: field manager "microshift", operation Update) when the content is what
// MicroShift shipped, and keep look-alikes: a client calling itself microshift with other rules
// or with a server-side apply, and an OLM install's binding. (Before, all were deleted.)
func TestLegacyDeletionProvesMicroShiftsOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pl := mustPrepare(t, testOptions(t, "4.16"))
	var mine []string
	impostors := map[string]func(u *unstructured.Unstructured) (manager string, apply bool){
		"ClusterRole.rbac.authorization.k8s.io topolvm-node": func(u *unstructured.Unstructured) (string, bool) {
			u.Object["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"*"}}}
			return "microshift", false
		},
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-controller": func(*unstructured.Unstructured) (string, bool) {
			return "microshift", true
		},
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node": func(u *unstructured.Unstructured) (string, bool) {
			u.SetLabels(map[string]string{"operators.coreos.com/topolvm.openshift-storage": ""})
			return "microshift", false
		},
	}
	for _, r := range legacyTopoLVMObjects {
		// The ServiceAccounts, a bare name, record no writer at all: nothing proves them.
		if _, impostor := impostors[r.String()]; !impostor && r.Kind != "SecurityContextConstraints" && r.Kind != "ServiceAccount" {
			mine = append(mine, r.String())
		}
	}
	for _, ob := range pl.objects {
		u := ob.Obj.DeepCopy()
		ref := ob.Ref()
		if eras.ClusterScoped(ref.Kind) {
			u.SetNamespace("")
			ref.Namespace = ""
		}
		if ref.Kind == "CustomResourceDefinition" || ref.Kind == "SecurityContextConstraints" {
			continue // established by the applier below; no SCC API here
		}
		manager, apply := "microshift", false
		if f, ok := impostors[ref.String()]; ok {
			manager, apply = f(u)
		}
		if ref.Kind == "LogicalVolume" || ref.Kind == "StorageClass" || ref.Kind == "CSIDriver" {
			continue
		}
		var err error
		if apply {
			_, err = e.ri(ref).Apply(ctx, ref.Name, u, metav1.ApplyOptions{FieldManager: manager, Force: true})
		} else {
			_, err = e.ri(ref).Create(ctx, u, metav1.CreateOptions{FieldManager: manager})
		}
		if err != nil {
			t.Fatalf("creating %s as MicroShift 4.16 did: %v", ref, err)
		}
	}

	o := testOptions(t, "4.17")
	res := e.apply(o)
	if got := refsNamed(res.Deleted); !slices.Equal(got, mine) {
		t.Errorf("deleted\n%v\nwant MicroShift's own\n%v", got, mine)
	}
	for name, want := range map[string]string{
		"ClusterRole.rbac.authorization.k8s.io topolvm-node":              "not the ClusterRole MicroShift shipped: rules[0] differs",
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-controller": `no "microshift" Update entry`,
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node":       "installed through OLM (label operators.coreos.com/topolvm.openshift-storage=)",
		"ServiceAccount openshift-storage/topolvm-node":                   "no server-side apply by microshift-storage (no field manager recorded)",
	} {
		i := slices.IndexFunc(res.Kept, func(s Skip) bool { return s.Object.String() == name })
		if i < 0 || !strings.Contains(res.Kept[i].Reason, want) {
			t.Errorf("%s: kept %v, want a reason containing %q", name, res.Kept, want)
			continue
		}
		e.mustGet(res.Kept[i].Object)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, NotOwnedReason) && strings.Contains(w, "topolvm-node") }) {
		t.Errorf("warnings %q do not name the objects left alone", res.Warnings)
	}
}

// A Deployment or DaemonSet of MicroShift's name that is someone else's is in the way: the
// component fails naming it, who wrote it and what to do, and it is neither changed nor
// deleted; the other component is applied. MicroShift's own Deployment from before the applier
// (manager "microshift", Update) is taken over. (Before, any was silently overwritten.)
func TestForeignWorkloadInTheWay(t *testing.T) {
	for _, tc := range []struct {
		name    string
		manager string
		labels  map[string]string
		want    string // "" = taken over
	}{
		{"helm's", "helm", nil, "helm (Update)"},
		{"OLM's", "catalog", map[string]string{"olm.owner": "lvms-operator.v4.18.0"}, "installed through OLM, label olm.owner=lvms-operator.v4.18.0"},
		{"MicroShift's before the applier", "microshift", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			o := testOptions(t, "4.18")
			e.create(storageNamespaceRef, "microshift", nil)
			// The assets' own Deployment (an immutable selector does not get in the way), an
			// older image: a takeover would write it.
			dep := find(t, mustPrepare(t, o), "Deployment", "lvms-operator")
			before := e.create(lvmsOperatorRef, tc.manager, map[string]any{"spec": dep.Object["spec"]}, func(u *unstructured.Unstructured) {
				u.SetLabels(tc.labels)
				containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = "registry.example/lvms-operator:older"
				_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
			})
			res, err := e.applyErr(o)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Apply over MicroShift's own Deployment: %v", err)
				}
				if !slices.ContainsFunc(res.Updated, lvmsOperatorRef.SameObject) {
					t.Errorf("updated %v, want the operator taken over", refsNamed(res.Updated))
				}
				return
			}
			var inTheWay *InTheWayError
			if !errors.As(err, &inTheWay) || !inTheWay.Object.SameObject(lvmsOperatorRef) {
				t.Fatalf("Apply = %v, want an *InTheWayError for %s", err, lvmsOperatorRef)
			}
			for _, s := range []string{lvmsOperatorRef.String(), tc.want, "neither changed nor deleted", "Remove it"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if after := e.mustGet(lvmsOperatorRef); after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("the foreign Deployment was written (resourceVersion %s → %s)", before.GetResourceVersion(), after.GetResourceVersion())
			}
			if res.Components[0].Err == nil || res.Components[1].Err != nil {
				t.Errorf("components %+v, want storage failed and the snapshot controller applied", res.Components)
			}
			e.mustGet(snapshotControllerRef)
		})
	}
}

// A controller reference proves the operator's vg-manager only when it names MicroShift's
// LVMCluster: one naming the Namespace MicroShift applied, or an LVMCluster by a stale UID,
// proves nothing. (Before, a controller reference to anything applied was proof enough.)
func TestControllerReferenceProvesOnlyTheDeclaredController(t *testing.T) {
	vgManager := daemonSetRef(StorageNamespace, "vg-manager")
	for _, tc := range []struct {
		name  string
		owner func(e *env) metav1.OwnerReference
		want  string
	}{
		{"the Namespace", func(e *env) metav1.OwnerReference {
			ns := e.mustGet(storageNamespaceRef)
			return metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: ns.GetName(), UID: ns.GetUID()}
		}, "controlled by Namespace openshift-storage, not by LVMCluster.lvm.topolvm.io openshift-storage/lvms"},
		{"a stale LVMCluster", func(e *env) metav1.OwnerReference {
			return metav1.OwnerReference{APIVersion: "lvm.topolvm.io/v1alpha1", Kind: "LVMCluster", Name: "lvms", UID: "stale"}
		}, "its controller reference names UID stale, not the live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			o := testOptions(t, "4.18")
			e.apply(o)
			ref := tc.owner(e)
			yes := true
			ref.Controller = &yes
			e.create(vgManager, "someone", olmDeployment, func(u *unstructured.Unstructured) { u.SetOwnerReferences([]metav1.OwnerReference{ref}) })
			o.Storage.Driver, o.Prune = DriverNone, true
			res := e.apply(o)
			e.mustGet(vgManager)
			if got := keptReason(res, vgManager); !strings.Contains(got, tc.want) {
				t.Errorf("vg-manager kept for %q, want %q", got, tc.want)
			}
		})
	}
}

// Every object the applier may delete is declared with what proves it (shipped content or its
// controller), and every declared content is in the object as each era's assets ship it — the
// applier's fixtures and, outside -short, the rebase's golden trees — so MicroShift's own
// objects are recognised in every era. An entry no era ships is an error too.
func TestShippedContentMatchesAssets(t *testing.T) {
	var trees []string
	for _, era := range []string{"4.16", "4.17", "4.18"} {
		trees = append(trees, filepath.Join("testdata", "eras", era, "assets"))
	}
	if !testing.Short() {
		trees = append(trees, goldenEras(t)...)
	}
	for _, list := range [][]ObjectRef{legacyTopoLVMObjects, lvmsObjects, snapshotWebhookObjects} {
		for _, r := range list {
			if _, ok := shippedContent[r.String()]; !ok && operatorCreated[r.String()].Name == "" {
				t.Errorf("%s may be deleted but has no shipped content or controller declared", r)
			}
		}
	}
	seen := map[string]bool{}
	for _, tree := range trees {
		files, err := assets.Read(os.DirFS(tree))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			docs, err := assets.DecodeDocs(f.Path, f.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				ref := assets.RefOf(d)
				if eras.ClusterScoped(ref.Kind) {
					ref.Namespace = ""
				}
				want, ok := parsedShipped()[ref.String()]
				if !ok {
					continue
				}
				seen[ref.String()] = true
				if path, ok := kube.ShippedMatches(d.Object, want); !ok {
					t.Errorf("%s (%s): %s differs from the declared shipped content %s", f.Path, tree, path, shippedContent[ref.String()])
				}
				// The eras' own objects are within the recorded bounds: the shipped_bounds.yaml
				// generator was run over this tree.
				if path, ok := kube.WithinBounds(d.Object, boundsOf(ref)); !ok {
					t.Errorf("%s (%s): %s is not in shipped_bounds.yaml; regenerate it (internal/cmd/shippedbounds) with every era's trees", f.Path, tree, path)
				}
			}
		}
	}
	for ref := range shippedContent {
		if !seen[ref] {
			t.Errorf("shippedContent declares %s, which no era's assets ship", ref)
		}
	}
	// Every declared object has its eras' content recorded (what proof 3 bounds the live object
	// by), and nothing else is recorded.
	for _, list := range [][]ObjectRef{legacyTopoLVMObjects, lvmsObjects, snapshotWebhookObjects} {
		for _, r := range list {
			if _, ok := shippedContent[r.String()]; ok && len(boundsOf(r)) == 0 {
				t.Errorf("%s has shipped content but no bounds in shipped_bounds.yaml", r)
			}
		}
	}
	for ref := range parsedBounds() {
		if _, ok := shippedContent[ref]; !ok {
			t.Errorf("shipped_bounds.yaml records %s, which shippedContent does not declare", ref)
		}
	}
}

package applier

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// eraWorkloads are every era's storage workloads.
var eraWorkloads = map[Era][]ObjectRef{
	EraLVMS:    {lvmsOperatorRef, daemonSetRef(StorageNamespace, "vg-manager")},
	EraTopoLVM: {deploymentRef(StorageNamespace, "topolvm-controller"), daemonSetRef(StorageNamespace, "topolvm-node")},
}

// assertOneEra checks that only era's storage workloads exist (the operator-created vg-manager
// aside, which no operator runs here) and that data and shared objects survived.
func (e *env) assertOneEra(era Era) {
	e.t.Helper()
	for other, refs := range eraWorkloads {
		for _, r := range refs {
			_, ok := e.get(r)
			switch {
			case other != era && ok:
				e.t.Errorf("%s of era %s still exists after changing to %s", r, other, era)
			case other == era && !ok && r.Name != "vg-manager":
				e.t.Errorf("%s of era %s missing", r, era)
			}
		}
	}
	for _, keep := range []ObjectRef{
		topolvmPVRef, storageNamespaceRef,
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "logicalvolumes.topolvm.io"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Name: "topolvm-provisioner"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Name: "topolvm.io"},
	} {
		e.mustGet(keep)
	}
}

// vgManagerOf plays the LVMS operator: it creates the vg-manager DaemonSet controlled by the
// LVMCluster MicroShift created, as the operator does.
func (e *env) vgManagerOf() {
	e.t.Helper()
	lc := e.mustGet(lvmClusterRef)
	e.create(daemonSetRef(StorageNamespace, "vg-manager"), "lvms-operator", olmDeployment, func(u *unstructured.Unstructured) {
		yes := true
		u.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: "lvm.topolvm.io/v1alpha1", Kind: "LVMCluster", Name: lc.GetName(), UID: lc.GetUID(), Controller: &yes,
		}})
	})
}

// Greenboot rolls a failed 4.17 upgrade back to 4.16: the TopoLVM start removes what LVMS ran
// (the operator, its RBAC and webhook, and the vg-manager its LVMCluster controls) and keeps the
// volume, the CRDs, the StorageClass and the LVMCluster; going forward again works too.
func TestEraChangeLVMSToTopoLVM(t *testing.T) {
	e := newEnv(t)
	o417 := testOptions(t, "4.17")
	e.apply(o417)
	e.vgManagerOf()
	e.topolvmPV()

	o416 := testOptions(t, "4.16")
	o416.LvmdPath = o417.LvmdPath
	res := e.apply(o416)
	var want []string
	for _, r := range lvmsObjects {
		want = append(want, r.String())
	}
	if got := refsNamed(res.Deleted); !slices.Equal(got, want) {
		t.Errorf("4.17 → 4.16 deleted\n%v\nwant\n%v", got, want)
	}
	e.assertOneEra(EraTopoLVM)
	e.mustGet(lvmClusterRef)
	e.assertNoop(o416, res)

	res = e.apply(o417)
	if len(res.Deleted) != len(legacyTopoLVMObjects)-1 { // no SCC API here
		t.Errorf("4.16 → 4.17 again deleted %v", refsNamed(res.Deleted))
	}
	e.assertOneEra(EraLVMS)
}

// The upgrades MicroShift's design names, with the rebase's own trees: 4.15 → 4.17 and
// 4.16 → 4.17 leave LVMS running and the TopoLVM volume in place.
func TestEraChangeToLVMS(t *testing.T) {
	for _, from := range []string{"4.15", "4.16"} {
		t.Run(from, func(t *testing.T) {
			goldenEras(t) // skips under -short: the trees live outside this module
			golden := func(ocp string) fs.FS { return os.DirFS(filepath.Join("..", "testdata", "golden", ocp, "assets")) }
			e := newEnv(t)
			o := testOptions(t, "4.16")
			o.Assets = golden(from)
			e.apply(o)
			e.topolvmPV()
			e.assertOneEra(EraTopoLVM)
			o.Assets = golden("4.17")
			res := e.apply(o)
			if res.Era != EraLVMS || len(res.Deleted) == 0 {
				t.Fatalf("era %s, deleted %v", res.Era, refsNamed(res.Deleted))
			}
			e.assertOneEra(EraLVMS)
			e.assertNoop(o, res)
		})
	}
}

// lvmsObjects names every workload, identity, RBAC object, service and webhook the LVMS assets
// ship, so a rollback leaves none of them behind.
func TestLVMSObjectsCoverAssets(t *testing.T) {
	for _, era := range []string{"4.17", "4.18"} {
		files, err := assets.Read(testOptions(t, era).Assets)
		if err != nil {
			t.Fatal(err)
		}
		files = slices.DeleteFunc(files, func(f assets.File) bool { return f.Comp != assets.Storage })
		refs, err := assets.Peek(files)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pruneCandidates(refs, nil) {
			if eras.ClusterScoped(r.Kind) {
				r.Namespace = ""
			}
			if !slices.ContainsFunc(lvmsObjects, r.SameObject) {
				t.Errorf("%s assets ship %s, which lvmsObjects does not list", era, r)
			}
		}
	}
}

// ReadyWorkloads is greenboot's list per era and plan, and what Options.Wait waits for.
func TestReadyWorkloads(t *testing.T) {
	for _, tc := range []struct {
		era  Era
		plan Plan
		want []string
	}{
		{EraLVMS, Plan{Storage: true, SnapshotController: true}, []string{
			"Deployment.apps openshift-storage/lvms-operator", "DaemonSet.apps openshift-storage/vg-manager", "Deployment.apps kube-system/csi-snapshot-controller"}},
		{EraTopoLVM, Plan{Storage: true, SnapshotController: true, SnapshotWebhook: true}, []string{
			"Deployment.apps openshift-storage/topolvm-controller", "DaemonSet.apps openshift-storage/topolvm-node",
			"Deployment.apps kube-system/csi-snapshot-webhook", "Deployment.apps kube-system/csi-snapshot-controller"}},
		{EraLVMS, Plan{SnapshotController: true}, []string{"Deployment.apps kube-system/csi-snapshot-controller"}},
		{EraTopoLVM, Plan{}, nil},
	} {
		if got := refsNamed(ReadyWorkloads(tc.era, tc.plan)); !slices.Equal(got, tc.want) {
			t.Errorf("ReadyWorkloads(%s, %+v) = %v, want %v", tc.era, tc.plan, got, tc.want)
		}
	}
	o := testOptions(t, "4.17")
	pl := mustPrepare(t, o)
	if !slices.Equal(pl.ready, ReadyWorkloads(EraLVMS, pl.result.Plan)) {
		t.Errorf("Wait watches %v, not ReadyWorkloads", pl.ready)
	}
}

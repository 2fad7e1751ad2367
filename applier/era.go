package applier

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// Era is the storage stack the assets deploy, the driver of package eras.
type Era = eras.Driver

// The two runtime eras: TopoLVM deployed directly (≤4.16) and the LVMS operator (≥4.17).
const (
	EraTopoLVM = eras.TopoLVM
	EraLVMS    = eras.LVMS
)

// eraSpec is everything that differs between the eras, kept as data so Apply has no scattered
// era checks.
type eraSpec struct {
	era Era
	// marker is an object only this era ships; its presence in the assets selects the era.
	marker ObjectRef
	// lvmdConfigMap, when set, receives the rendered lvmd config under lvmdKey (TopoLVM era).
	lvmdConfigMap *ObjectRef
	lvmdKey       string
	// runtimeLvmdCopy writes the lvmd config to Options.RuntimeLvmdPath (LVMS era): vg-manager reads
	// it through a hostPath.
	runtimeLvmdCopy bool
	// legacy are the objects of the other era, removed before applying (when the applier can
	// prove it applied them) and waited for until they are gone: an upgrade across eras
	// (TopoLVM → LVMS) and greenboot's rollback (LVMS → TopoLVM) both leave one era running.
	legacy []ObjectRef
	// ready are the workloads the optional readiness wait watches.
	ready []ObjectRef
	// created are the objects the era's operator creates for what MicroShift applied
	// (operatorCreated): pruned with the driver.
	created []ObjectRef
}

var (
	deploymentRef = func(ns, name string) ObjectRef {
		return ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: name}
	}
	daemonSetRef = func(ns, name string) ObjectRef {
		return ObjectRef{Group: "apps", Version: "v1", Kind: "DaemonSet", Namespace: ns, Name: name}
	}
	rbac = func(kind, ns, name string) ObjectRef {
		return ObjectRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: kind, Namespace: ns, Name: name}
	}
)

// lvmClusterMarker is the LVMCluster MicroShift creates, the LVMS era's marker.
var lvmClusterMarker = ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"}

// StorageNamespace is where LVMS and TopoLVM run.
const StorageNamespace = eras.StorageNamespace

var eraSpecs = []eraSpec{
	{
		era:             EraLVMS,
		marker:          lvmClusterMarker,
		runtimeLvmdCopy: true,
		legacy:          legacyTopoLVMObjects,
		ready:           []ObjectRef{deploymentRef(StorageNamespace, "lvms-operator"), daemonSetRef(StorageNamespace, "vg-manager")},
		created:         []ObjectRef{daemonSetRef(StorageNamespace, "vg-manager")},
	},
	{
		era:           EraTopoLVM,
		marker:        daemonSetRef(StorageNamespace, "topolvm-node"),
		lvmdConfigMap: &ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: StorageNamespace, Name: "lvmd"},
		lvmdKey:       "lvmd.yaml",
		legacy:        lvmsObjects,
		ready:         []ObjectRef{deploymentRef(StorageNamespace, "topolvm-controller"), daemonSetRef(StorageNamespace, "topolvm-node")},
	},
}

// legacyTopoLVMObjects are the TopoLVM objects the LVMS era deletes (MicroShift 4.17's
// deleteLegacyResources list), declared in package eras.
var legacyTopoLVMObjects = eras.LegacyTopoLVMObjects()

// lvmsObjects are the LVMS objects the TopoLVM era deletes (a rollback from 4.17+), declared in
// package eras.
var lvmsObjects = eras.LVMSObjects()

// snapshotWebhookObjects are the snapshot validation webhook's objects (4.14–4.17), declared in
// package eras: they are applied only when the webhook is requested and deleted otherwise, as
// 4.18 does (MicroShift's deleteCSIWebhook).
var snapshotWebhookObjects = eras.SnapshotWebhookObjects()

// snapshotReady are the snapshot workloads the readiness wait watches, per component.
var (
	snapshotControllerReady = deploymentRef(eras.SnapshotNamespace, "csi-snapshot-controller")
	snapshotWebhookReady    = deploymentRef(eras.SnapshotNamespace, "csi-snapshot-webhook")
)

// ReadyWorkloads lists the workloads that must become ready when era's assets are applied with
// plan: the storage era's (Deployment lvms-operator and DaemonSet vg-manager, or Deployment
// topolvm-controller and DaemonSet topolvm-node, in openshift-storage) when plan.Storage, and the
// snapshot controller's and webhook's Deployments (kube-system) when planned. It is the list
// MicroShift's greenboot health check waits for (namespaces are the refs' namespaces), and the
// one Options.Wait waits for.
func ReadyWorkloads(era Era, plan Plan) []ObjectRef {
	var out []ObjectRef
	if plan.Storage {
		for _, s := range eraSpecs {
			if s.era == era {
				out = append(out, s.ready...)
			}
		}
	}
	if plan.SnapshotWebhook {
		out = append(out, snapshotWebhookReady)
	}
	if plan.SnapshotController {
		out = append(out, snapshotControllerReady)
	}
	return out
}

// snapshotMarker is the object every snapshot component tree ships.
var snapshotMarker = deploymentRef(eras.SnapshotNamespace, "csi-snapshot-controller")

// identify picks the era whose marker object the assets ship. Assets that identify no era, or
// whose snapshot tree lacks the controller, are an error: deletions are declared per era, so
// nothing may be deleted (or applied) on a guess.
func identify(refs []ObjectRef) (*eraSpec, error) {
	if !slices.ContainsFunc(refs, snapshotMarker.SameObject) {
		return nil, fmt.Errorf("assets %s: no %s; the tree is not one lvms-rebase wrote (nothing applied or deleted)", assets.SnapshotDir, snapshotMarker)
	}
	for i := range eraSpecs {
		if slices.ContainsFunc(refs, eraSpecs[i].marker.SameObject) {
			return &eraSpecs[i], nil
		}
	}
	return nil, fmt.Errorf("assets %s identify no storage era: expected %s (LVMS, 4.17+) or %s (TopoLVM, up to 4.16); nothing applied or deleted",
		assets.StorageDir, eraSpecs[0].marker, eraSpecs[1].marker)
}

// versionConfigMap is where the assets record the LVMS version (4.15+).
var versionConfigMap = ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "kube-public", Name: "lvms-version"}

// assetsVersion returns data.version of the shipped lvms-version ConfigMap, "" without one.
func assetsVersion(files []assets.File) string {
	for _, f := range files {
		if f.Comp != assets.Storage {
			continue
		}
		docs, err := assets.DecodeDocs(f.Path, f.Data)
		if err != nil {
			continue // peek has already accepted every file
		}
		for _, d := range docs {
			if assets.RefOf(d).SameObject(versionConfigMap) {
				v, _, _ := unstructured.NestedString(d.Object, "data", "version")
				return v
			}
		}
	}
	return ""
}

// prunableKinds are what Prune removes of the storage driver: workloads, identities, RBAC,
// services and webhooks. CRDs (and so LVMCluster and LogicalVolume data), the namespace holding
// claims, StorageClasses, the CSIDriver and ConfigMaps are never pruned.
var prunableKinds = []string{
	"Deployment", "DaemonSet", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
	"ClusterRoleBinding", "Service", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
	"SecurityContextConstraints",
}

// pruneCandidates are the objects of shipped and the extra list of prunable kinds, each once, in
// a deterministic order.
func pruneCandidates(shipped, extra []ObjectRef) []ObjectRef {
	var out []ObjectRef
	for _, r := range append(slices.Clone(shipped), extra...) {
		if slices.Contains(prunableKinds, r.Kind) && !slices.ContainsFunc(out, r.SameObject) {
			out = append(out, r)
		}
	}
	return out
}

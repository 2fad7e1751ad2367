package applier

import "slices"

// Era is the storage stack the assets deploy.
type Era string

// The two runtime eras: TopoLVM deployed directly (≤4.16) and the LVMS operator (≥4.17).
const (
	EraTopoLVM Era = "topolvm"
	EraLVMS    Era = "lvms"
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
	// legacy are objects of an older era removed before applying, waiting until they are gone.
	legacy []ObjectRef
	// ready are the workloads the optional readiness wait watches.
	ready []ObjectRef
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

// StorageNamespace is where LVMS and TopoLVM run.
const StorageNamespace = "openshift-storage"

var eras = []eraSpec{
	{
		era:             EraLVMS,
		marker:          ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"},
		runtimeLvmdCopy: true,
		// MicroShift 4.17's deleteLegacyResources list. The namespace, StorageClass
		// topolvm-provisioner, CSIDriver topolvm.io, the logicalvolumes CRD (and so the volumes) and
		// lvms-version stay: LVMS reuses them.
		legacy: []ObjectRef{
			deploymentRef(StorageNamespace, "topolvm-controller"),
			daemonSetRef(StorageNamespace, "topolvm-node"),
			rbac("ClusterRoleBinding", "", "topolvm-node-scc"),
			rbac("ClusterRoleBinding", "", "topolvm-node"),
			rbac("ClusterRoleBinding", "", "topolvm-controller"),
			rbac("RoleBinding", StorageNamespace, "topolvm-controller"),
			rbac("Role", StorageNamespace, "topolvm-controller"),
			rbac("ClusterRole", "", "topolvm-controller"),
			rbac("ClusterRole", "", "topolvm-node-scc"),
			rbac("ClusterRole", "", "topolvm-node"),
			{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "topolvm-controller"},
			{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "topolvm-node"},
			{Version: "v1", Kind: "ConfigMap", Namespace: StorageNamespace, Name: "lvmd"},
			{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints", Name: "topolvm-node"},
		},
		ready: []ObjectRef{deploymentRef(StorageNamespace, "lvms-operator"), daemonSetRef(StorageNamespace, "vg-manager")},
	},
	{
		era:           EraTopoLVM,
		marker:        daemonSetRef(StorageNamespace, "topolvm-node"),
		lvmdConfigMap: &ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: StorageNamespace, Name: "lvmd"},
		lvmdKey:       "lvmd.yaml",
		ready:         []ObjectRef{deploymentRef(StorageNamespace, "topolvm-controller"), daemonSetRef(StorageNamespace, "topolvm-node")},
	},
}

// snapshotReady are the snapshot workloads the readiness wait watches, per component.
var (
	snapshotControllerReady = deploymentRef("kube-system", "csi-snapshot-controller")
	snapshotWebhookReady    = deploymentRef("kube-system", "csi-snapshot-webhook")
)

// detectEra picks the era whose marker object the assets ship; nil when the assets have no
// storage component (a snapshot-only tree).
func detectEra(refs []ObjectRef) *eraSpec {
	for i := range eras {
		if slices.ContainsFunc(refs, eras[i].marker.sameObject) {
			return &eras[i]
		}
	}
	return nil
}

// Package eras declares, once, the facts about MicroShift's storage eras and assets that both
// sides of the assets/ tree need: lvms-rebase, which writes the tree, and the applier, which
// applies it. The applier module cannot import lvms-rebase, so the facts live here and the
// rebase imports them: the storage drivers and their namespaces, the TopoLVM objects the LVMS
// era deletes, the snapshot validation webhook's objects, the cluster-scoped kinds the assets
// may contain, and the two spellings of each architecture.
package eras

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Driver is the storage stack an era deploys.
type Driver string

// The two storage drivers: TopoLVM deployed directly by MicroShift (4.14–4.16) and the LVMS
// operator with an LVMCluster (4.17+).
const (
	TopoLVM Driver = "topolvm"
	LVMS    Driver = "lvms"
)

// Namespaces MicroShift deploys into, in every era: LVMS/TopoLVM (whatever the CSV suggests,
// openshift-lvm-storage from LVMS 4.20) and the CSI snapshot controller.
const (
	StorageNamespace  = "openshift-storage"
	SnapshotNamespace = "kube-system"
)

// ObjectRef names one API object.
type ObjectRef struct {
	Group, Version, Kind string
	Namespace, Name      string
}

// String formats the reference as `Kind.group namespace/name`, the form used in logs and errors.
func (r ObjectRef) String() string {
	gk := r.Kind
	if r.Group != "" {
		gk += "." + r.Group
	}
	if r.Namespace != "" {
		return gk + " " + r.Namespace + "/" + r.Name
	}
	return gk + " " + r.Name
}

// SameObject reports whether r and o name the same object, whatever their versions.
func (r ObjectRef) SameObject(o ObjectRef) bool {
	return r.Group == o.Group && r.Kind == o.Kind && r.Namespace == o.Namespace && r.Name == o.Name
}

// GroupVersionKind is r's group, version and kind.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

func deployment(ns, name string) ObjectRef {
	return ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: name}
}

func daemonSet(ns, name string) ObjectRef {
	return ObjectRef{Group: "apps", Version: "v1", Kind: "DaemonSet", Namespace: ns, Name: name}
}

func rbac(kind, ns, name string) ObjectRef {
	return ObjectRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: kind, Namespace: ns, Name: name}
}

// LegacyTopoLVMObjects are the TopoLVM objects the LVMS era deletes (MicroShift 4.17's
// deleteLegacyResources list). The namespace, StorageClass topolvm-provisioner, CSIDriver
// topolvm.io, the logicalvolumes CRD (and so the volumes) and lvms-version stay: LVMS reuses
// them.
func LegacyTopoLVMObjects() []ObjectRef {
	return []ObjectRef{
		deployment(StorageNamespace, "topolvm-controller"),
		daemonSet(StorageNamespace, "topolvm-node"),
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
	}
}

// LVMSObjects are the LVMS objects the TopoLVM era deletes when a node goes back from LVMS
// (4.17+) to TopoLVM (4.14–4.16), as greenboot does when it rolls an upgrade back: the operator's
// webhook, workloads, services, identities and RBAC, as the 4.17+ assets ship them, and the
// vg-manager DaemonSet the operator creates. Without this the operator and vg-manager keep
// running beside topolvm-controller and topolvm-node on the same volume groups. The namespace,
// CRDs (and so the LVMCluster and LogicalVolumes), the StorageClass, the CSIDriver and
// lvms-version stay: TopoLVM reuses them, and a later LVMS start finds its LVMCluster again.
func LVMSObjects() []ObjectRef {
	return []ObjectRef{
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Name: "vlvmcluster.kb.io-lvms-operator"},
		deployment(StorageNamespace, "lvms-operator"),
		daemonSet(StorageNamespace, "vg-manager"),
		{Version: "v1", Kind: "Service", Namespace: StorageNamespace, Name: "lvms-webhook-service"},
		{Version: "v1", Kind: "Service", Namespace: StorageNamespace, Name: "lvms-operator-metrics-service"},
		{Version: "v1", Kind: "Service", Namespace: StorageNamespace, Name: "vg-manager-metrics-service"},
		rbac("ClusterRoleBinding", "", "lvms-operator"),
		rbac("ClusterRoleBinding", "", "vg-manager"),
		rbac("RoleBinding", StorageNamespace, "lvms-operator"),
		rbac("RoleBinding", StorageNamespace, "vg-manager"),
		rbac("RoleBinding", StorageNamespace, "lvms-metrics"),
		rbac("Role", StorageNamespace, "lvms-operator"),
		rbac("Role", StorageNamespace, "vg-manager"),
		rbac("Role", StorageNamespace, "lvms-metrics"),
		rbac("ClusterRole", "", "lvms-operator"),
		rbac("ClusterRole", "", "vg-manager"),
		{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "lvms-operator"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "vg-manager"},
	}
}

// SnapshotWebhookObjects are the CSI snapshot validation webhook's objects, shipped up to 4.17
// (MicroShift 4.18 "Remove CSI webhook" deletes them, its deleteCSIWebhook). The
// ValidatingWebhookConfiguration comes first: its presence in the assets is how the applier
// knows the assets ship the webhook.
func SnapshotWebhookObjects() []ObjectRef {
	return []ObjectRef{
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Name: "snapshot.storage.k8s.io"},
		deployment(SnapshotNamespace, "csi-snapshot-webhook"),
		{Version: "v1", Kind: "Service", Namespace: SnapshotNamespace, Name: "csi-snapshot-webhook"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: SnapshotNamespace, Name: "csi-snapshot-webhook"},
		rbac("ClusterRole", "", "csi-snapshot-webhook-clusterrole"),
		rbac("ClusterRoleBinding", "", "csi-snapshot-webhook-clusterrolebinding"),
	}
}

// kindOrder is the order kinds are applied in, CRDs first (they are waited for): namespace,
// identities, RBAC, configuration, services, workloads, the LVMCluster, webhooks, classes. It is
// the one order of both sides: the applier applies in it, and the rebase's bundle translation
// lists objects in it. A kind not listed has no place, so a new kind in the assets gets a
// deliberate one (the applier refuses it).
//
// The LVMCluster is created before the operator's admission webhooks are registered. The
// rebase writes a namespaceSelector that really matches openshift-storage (the legacy one never
// matched), so a webhook registered first would reject the create until the lvms-operator pod
// serves it — and on a MicroShift node that pod cannot start before the CNI, which
// StartComponents applies after storage: start-up would deadlock. The LVMCluster has no spec
// and is create-only, so there is nothing for the webhooks to validate or default.
var kindOrder = []string{
	"CustomResourceDefinition",
	"Namespace",
	"ServiceAccount",
	"ClusterRole",
	"Role",
	"ClusterRoleBinding",
	"RoleBinding",
	"SecurityContextConstraints",
	"ConfigMap",
	"Service",
	"Deployment",
	"DaemonSet",
	"LVMCluster",
	"ValidatingWebhookConfiguration",
	"MutatingWebhookConfiguration",
	"CSIDriver",
	"StorageClass",
	"VolumeSnapshotClass",
}

// KindOrder lists the kinds in the order they are applied (and translated objects listed).
func KindOrder() []string { return slices.Clone(kindOrder) }

// KindRank is kind's place in KindOrder; -1 for a kind without one.
func KindRank(kind string) int { return slices.Index(kindOrder, kind) }

// clusterScopedKinds are the cluster-scoped kinds the assets may contain, sorted.
var clusterScopedKinds = []string{
	"CSIDriver",
	"ClusterRole",
	"ClusterRoleBinding",
	"CustomResourceDefinition",
	"MutatingWebhookConfiguration",
	"Namespace",
	"PriorityClass",
	"SecurityContextConstraints",
	"StorageClass",
	"ValidatingWebhookConfiguration",
	"VolumeSnapshotClass",
}

// ClusterScoped reports whether kind is one of the cluster-scoped kinds the assets may contain;
// any other kind is namespaced. The applier's tests check the list against a real API server's
// discovery.
func ClusterScoped(kind string) bool {
	_, found := slices.BinarySearch(clusterScopedKinds, kind)
	return found
}

// ClusterScopedKinds lists the kinds ClusterScoped accepts, sorted.
func ClusterScopedKinds() []string { return slices.Clone(clusterScopedKinds) }

// Arch is one architecture in both spellings: MicroShift's (release-<arch>.json, payload tags,
// --arch, the lock) and Go/OCI's (image platforms, runtime.GOARCH).
type Arch struct {
	MicroShift string
	GoArch     string
}

// Archs are the supported architectures, the ones MicroShift ships release JSONs for first.
func Archs() []Arch {
	return []Arch{
		{MicroShift: "x86_64", GoArch: "amd64"},
		{MicroShift: "aarch64", GoArch: "arm64"},
		{MicroShift: "ppc64le", GoArch: "ppc64le"},
		{MicroShift: "s390x", GoArch: "s390x"},
	}
}

// LookupArch finds an architecture given in either spelling.
func LookupArch(name string) (Arch, bool) {
	for _, a := range Archs() {
		if name == a.MicroShift || name == a.GoArch {
			return a, true
		}
	}
	return Arch{}, false
}

package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// NameRule gives the file name MicroShift uses for one object it already ships.
type NameRule struct {
	Kind string // object kind, e.g. "CustomResourceDefinition"
	Name string // metadata.name
	File string // file name inside the component directory
}

// NameTable holds the file names of one LVMS-axis era.
type NameTable struct {
	LVMS []NameRule // assets/components/lvms
}

// The names below are MicroShift's, taken from its release branches; they are kept so that a
// rebase produces no renames in the MicroShift history. Objects generated from the CSV
// (RBAC, service accounts, Services, the operator Deployment) already follow the default
// pattern and need no entry.
var (
	topolvmNames = []NameRule{
		{"CSIDriver", "topolvm.io", "csi-driver.yaml"},
		{"ConfigMap", "lvms-version", "topolvm-configmap_lvms-version.yaml"},
		{"ConfigMap", "lvmd", "topolvm-lvmd-config_configmap_v1.yaml"},
		{"CustomResourceDefinition", "logicalvolumes.topolvm.io", "topolvm.io_logicalvolumes.yaml"},
		{"DaemonSet", "topolvm-node", "topolvm-node_daemonset.yaml"},
		{"Deployment", "topolvm-controller", "topolvm-controller_deployment.yaml"},
		{"Namespace", "openshift-storage", "topolvm-openshift-storage_namespace.yaml"},
		{"SecurityContextConstraints", "topolvm-node", "topolvm-node-securitycontextconstraint.yaml"},
		{"StorageClass", "topolvm-provisioner", "topolvm_default-storage-class.yaml"},
	}
	lvmsNames = []NameRule{
		{"ConfigMap", "lvms-version", "topolvm-configmap_lvms-version.yaml"},
		{"CustomResourceDefinition", "logicalvolumes.topolvm.io", "topolvm.io_logicalvolumes.yaml"},
		{"CustomResourceDefinition", "lvmclusters.lvm.topolvm.io", "lvm.topolvm.io_lvmclusters.yaml"},
		{"CustomResourceDefinition", "lvmvolumegroupnodestatuses.lvm.topolvm.io", "lvm.topolvm.io_lvmvolumegroupnodestatuses.yaml"},
		{"CustomResourceDefinition", "lvmvolumegroups.lvm.topolvm.io", "lvm.topolvm.io_lvmvolumegroups.yaml"},
		{"LVMCluster", "lvms", "lvms_default-lvmcluster.yaml"},
		{"Namespace", "openshift-storage", "topolvm-openshift-storage_namespace.yaml"},
		{"StorageClass", "topolvm-provisioner", "topolvm_default-storage-class.yaml"},
		{"ValidatingWebhookConfiguration", "vlvmcluster.kb.io-lvms-operator", "lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml"},
	}
	// MicroShift ships 05_operand_rbac.yaml as a multi-document copy of the split files; with
	// one object per file only the split names remain (role.yaml/rolebinding.yaml as on main).
	snapshotNames = []NameRule{
		{"ClusterRole", "openshift-csi-snapshot-controller-runner", "clusterrole.yaml"},
		{"ClusterRoleBinding", "openshift-csi-snapshot-controller-role", "clusterrolebinding.yaml"},
		{"CustomResourceDefinition", "volumesnapshotclasses.snapshot.storage.k8s.io", "volumesnapshotclasses.yaml"},
		{"CustomResourceDefinition", "volumesnapshotcontents.snapshot.storage.k8s.io", "volumesnapshotcontents.yaml"},
		{"CustomResourceDefinition", "volumesnapshots.snapshot.storage.k8s.io", "volumesnapshots.yaml"},
		{"Deployment", "csi-snapshot-controller", "csi_controller_deployment.yaml"},
		{"Role", "csi-snapshot-controller-leaderelection", "role.yaml"},
		{"RoleBinding", "csi-snapshot-controller-leaderelection", "rolebinding.yaml"},
		{"ServiceAccount", "csi-snapshot-controller", "serviceaccount.yaml"},
	}
	// The webhook's objects are declared once, in the applier module's package eras (the
	// applier deletes them where the webhook is gone); only their file names are here.
	snapshotWebhookNames = append(append([]NameRule(nil), snapshotNames...), webhookNameRules()...)
)

// webhookFiles are MicroShift's file names of the snapshot webhook's objects, by kind: the
// webhook has one object of each kind.
var webhookFiles = map[string]string{
	"ClusterRole":                    "webhook_clusterrole.yaml",
	"ClusterRoleBinding":             "webhook_clusterrolebinding.yaml",
	"Deployment":                     "webhook_deployment.yaml",
	"Service":                        "webhook_service.yaml",
	"ServiceAccount":                 "webhook_serviceaccount.yaml",
	"ValidatingWebhookConfiguration": "webhook_config.yaml",
}

// webhookNameRules names the files of eras.SnapshotWebhookObjects. A webhook object of a kind
// without a file name is a programming error, caught by every test of the package.
func webhookNameRules() []NameRule {
	var out []NameRule
	for _, r := range eras.SnapshotWebhookObjects() {
		file, ok := webhookFiles[r.Kind]
		if !ok {
			panic(fmt.Sprintf("render: no file name for snapshot webhook object %s", r))
		}
		out = append(out, NameRule{Kind: r.Kind, Name: r.Name, File: file})
	}
	return out
}

// NameTables maps an LVMS-axis era name (era.Era.Name, an era.LVMSTable row) to the file
// names of its LVMS component. Every LVMS row must have an entry (a test checks).
var NameTables = map[string]NameTable{
	"topolvm-4.14": {LVMS: topolvmNames},
	"topolvm-4.15": {LVMS: topolvmNames},
	"topolvm-4.16": {LVMS: topolvmNames},
	"lvms-4.17":    {LVMS: lvmsNames},
	"lvms-4.18":    {LVMS: lvmsNames},
	"lvms-4.20":    {LVMS: lvmsNames},
}

// SnapshotNameTables maps an OCP-axis era name (era.Era.OCPEra, an era.OCPTable row) to the
// file names of the snapshot controller: they follow MicroShift's release, not LVMS's.
var SnapshotNameTables = map[string][]NameRule{
	"ocp-4.14": snapshotWebhookNames,
	"ocp-4.17": snapshotWebhookNames,
	"ocp-4.18": snapshotNames,
	"ocp-4.22": snapshotNames,
	"ocp-5":    snapshotNames,
}

// SnapshotFile is MicroShift's file name of a snapshot-controller object it ships (by kind and
// metadata.name, any era): the snapshot translation names its objects by it (rebase/snapshot),
// so the names live here once. ok is false for an object MicroShift does not ship.
func SnapshotFile(kind, name string) (file string, ok bool) {
	for _, r := range snapshotWebhookNames {
		if r.Kind == kind && r.Name == name {
			return r.File, true
		}
	}
	return "", false
}

// FileName returns the file name of an object: the rule's name when rules has one for
// kind/name, else DefaultFileName.
func FileName(rules []NameRule, apiVersion, kind, name string) (string, error) {
	for _, r := range rules {
		if r.Kind == kind && r.Name == name {
			return r.File, nil
		}
	}
	return DefaultFileName(apiVersion, kind, name)
}

// DefaultFileName names an object MicroShift does not ship yet:
// <name>_<group>_<version>_<kind>.yaml, with the core group written as just <version> and
// the kind lowercased (e.g. "vg-manager_v1_serviceaccount.yaml",
// "lvms-operator_apps_v1_deployment.yaml"), the pattern of MicroShift's generated files.
func DefaultFileName(apiVersion, kind, name string) (string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", fmt.Errorf("%s %q: apiVersion %q: %w", kind, name, apiVersion, err)
	}
	if name == "" || kind == "" || gv.Version == "" {
		return "", fmt.Errorf("object apiVersion=%q kind=%q name=%q: expected apiVersion, kind and metadata.name", apiVersion, kind, name)
	}
	if strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return "", fmt.Errorf("%s %q: name cannot be used as a file name", kind, name)
	}
	parts := []string{name}
	if gv.Group != "" {
		parts = append(parts, gv.Group)
	}
	parts = append(parts, gv.Version, strings.ToLower(kind))
	return strings.Join(parts, "_") + ".yaml", nil
}

// Package era declares, as data, what MicroShift ships for each OpenShift minor: which
// storage driver (TopoLVM or the LVMS operator), which kustomize overlays render it, which
// bundle and payload images become which release-JSON keys, and which bundle objects are
// shipped. Every version difference the rebase and the applier act on is a field here or
// in an overlay, never an `if minor >= …` in code.
package era

import (
	"fmt"
	"sort"

	"github.com/Masterminds/semver/v3"
)

// Driver is the storage implementation MicroShift deploys in an era.
type Driver string

const (
	// TopoLVM: MicroShift deploys topolvm-controller and topolvm-node itself (4.14–4.16).
	TopoLVM Driver = "topolvm"
	// LVMS: MicroShift deploys the lvms-operator and an LVMCluster (4.17+).
	LVMS Driver = "lvms"
)

// ImageKey maps an image name in an input (a CSV relatedImages name or an image-references
// tag) to the key MicroShift's release-<arch>.json uses for it.
type ImageKey struct {
	Name string // relatedImages name or image-references tag
	Key  string // release JSON key; templates use it with '-' replaced by '_'
}

// Selector picks bundle objects by kind and, optionally, name ("" matches any name).
type Selector struct {
	Kind string
	Name string
}

// Matches reports whether an object of kind/name is selected.
func (s Selector) Matches(kind, name string) bool {
	return s.Kind == kind && (s.Name == "" || s.Name == name)
}

// CSVPolicy says which objects the ClusterServiceVersion's install strategy contributes.
type CSVPolicy struct {
	// ServiceAccounts limits the permission entries turned into SA/RBAC objects; nil means all.
	ServiceAccounts []string
	// Deployments turns install.spec.deployments into Deployments.
	Deployments bool
	// Webhooks turns webhookdefinitions into admission webhook configurations.
	Webhooks bool
}

// Era is one row of the table: the MicroShift layout for a range of OpenShift minors.
type Era struct {
	// Name identifies the era in logs, lock files and golden directories.
	Name string
	// OCP is a semver constraint over "X.Y" (e.g. ">= 4.18, < 4.20").
	OCP string
	// Driver is TopoLVM or LVMS.
	Driver Driver
	// BundleMinor is the LVMS bundle minor this era ships when it differs from the OCP minor
	// (MicroShift 4.16 ships LVMS 4.15, the last bundle with TopoLVM RBAC). "" = the OCP minor.
	BundleMinor string
	// Namespace is where namespaced LVMS/TopoLVM objects go. MicroShift always uses
	// openshift-storage, whatever the CSV suggests (openshift-lvm-storage from 4.20).
	Namespace string
	// SnapshotNamespace is where the CSI snapshot controller runs.
	SnapshotNamespace string
	// LVMSOverlay and SnapshotOverlay are kustomize overlay directories relative to the
	// kustomize root (the repository's base/ and overlays/).
	LVMSOverlay     string
	SnapshotOverlay string
	// BundleImages are the relatedImages every bundle of the era must carry.
	BundleImages []ImageKey
	// PayloadImages are the image-references tags taken from the OCP payload.
	PayloadImages []ImageKey
	// CSV is what the CSV's install strategy contributes.
	CSV CSVPolicy
	// BundleInclude selects the bundle's non-CSV manifests MicroShift ships; others are
	// reported as excluded.
	BundleInclude []Selector
	// SnapshotWebhook is true when the CSI snapshot validation webhook is shipped.
	SnapshotWebhook bool
}

// StorageKeys are every release-JSON key any era has written for storage. Keys in this set
// that an era does not produce are removed from release-<arch>.json on rebase; keys outside
// it (cli, coredns, openssl, …) are never touched.
var StorageKeys = []string{
	"topolvm_csi", "topolvm_csi_registrar", "topolvm_csi_livenessprobe", "topolvm_csi_resizer",
	"topolvm_csi_provisioner", "lvms_operator",
	"csi-external-snapshotter", "csi-snapshot-controller", "csi-snapshot-validation-webhook",
}

var (
	topolvmImages = []ImageKey{
		{"topolvm-csi", "topolvm_csi"},
		{"topolvm-csi-registrar", "topolvm_csi_registrar"},
		{"topolvm-csi-livenessprobe", "topolvm_csi_livenessprobe"},
		{"topolvm-csi-resizer", "topolvm_csi_resizer"},
		{"topolvm-csi-provisioner", "topolvm_csi_provisioner"},
	}
	lvmsImages        = []ImageKey{{"lvms-operator", "lvms_operator"}}
	snapshotter       = ImageKey{"csi-external-snapshotter", "csi-external-snapshotter"}
	snapshotCtrl      = ImageKey{"csi-snapshot-controller", "csi-snapshot-controller"}
	snapshotWebhook   = ImageKey{"csi-snapshot-validation-webhook", "csi-snapshot-validation-webhook"}
	topolvmCSV        = CSVPolicy{ServiceAccounts: []string{"topolvm-controller", "topolvm-node"}}
	lvmsCSV           = CSVPolicy{Deployments: true, Webhooks: true}
	topolvmBundleObjs = []Selector{{"CustomResourceDefinition", "logicalvolumes.topolvm.io"}}
	lvmsBundleObjs    = []Selector{
		{"CustomResourceDefinition", ""},
		{"Service", ""},
		{"Role", "lvms-metrics"},
		{"RoleBinding", "lvms-metrics"},
	}
)

// Table is the era table, oldest first. Ranges must not overlap (a test checks).
var Table = []Era{
	{
		// 4.14 is 4.15 without the kube-public/lvms-version ConfigMap (its overlay drops it).
		Name: "topolvm-4.14", OCP: "~4.14", Driver: TopoLVM,
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/topolvm/4.14", SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		BundleImages:  topolvmImages,
		PayloadImages: []ImageKey{snapshotter, snapshotCtrl, snapshotWebhook},
		CSV:           topolvmCSV, BundleInclude: topolvmBundleObjs, SnapshotWebhook: true,
	},
	{
		// 4.15: lvmd still a separate container, lvms-version ConfigMap added.
		Name: "topolvm-4.15", OCP: "~4.15", Driver: TopoLVM,
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/topolvm/4.15", SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		BundleImages:  topolvmImages,
		PayloadImages: []ImageKey{snapshotter, snapshotCtrl, snapshotWebhook},
		CSV:           topolvmCSV, BundleInclude: topolvmBundleObjs, SnapshotWebhook: true,
	},
	{
		Name: "topolvm-4.16", OCP: "~4.16", Driver: TopoLVM, BundleMinor: "4.15",
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/topolvm/4.16", SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		BundleImages:  topolvmImages,
		PayloadImages: []ImageKey{snapshotter, snapshotCtrl, snapshotWebhook},
		CSV:           topolvmCSV, BundleInclude: topolvmBundleObjs, SnapshotWebhook: true,
	},
	{
		Name: "lvms-4.17", OCP: "~4.17", Driver: LVMS,
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/lvms/4.17", SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		BundleImages:  lvmsImages,
		PayloadImages: []ImageKey{snapshotCtrl, snapshotWebhook},
		CSV:           lvmsCSV, BundleInclude: lvmsBundleObjs, SnapshotWebhook: true,
	},
	{
		Name: "lvms-4.18", OCP: ">= 4.18, < 4.20", Driver: LVMS,
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/lvms/4.18", SnapshotOverlay: "overlays/csi-snapshot-controller/4.18",
		BundleImages:  lvmsImages,
		PayloadImages: []ImageKey{snapshotCtrl},
		CSV:           lvmsCSV, BundleInclude: lvmsBundleObjs,
	},
	{
		Name: "lvms-4.20", OCP: ">= 4.20", Driver: LVMS,
		Namespace: "openshift-storage", SnapshotNamespace: "kube-system",
		LVMSOverlay: "overlays/lvms/4.20", SnapshotOverlay: "overlays/csi-snapshot-controller/4.18",
		BundleImages:  lvmsImages,
		PayloadImages: []ImageKey{snapshotCtrl},
		CSV:           lvmsCSV, BundleInclude: lvmsBundleObjs,
	},
}

// For returns the era of an OpenShift minor "X.Y" (a patch or pre-release is ignored).
func For(ocp string) (Era, error) {
	v, err := semver.NewVersion(ocp)
	if err != nil {
		return Era{}, fmt.Errorf("OpenShift version %q: expected X.Y (e.g. 4.18): %w", ocp, err)
	}
	minor, _ := semver.NewVersion(fmt.Sprintf("%d.%d.0", v.Major(), v.Minor()))
	for _, e := range Table {
		c, err := semver.NewConstraint(e.OCP)
		if err != nil {
			return Era{}, fmt.Errorf("era %s: bad constraint %q: %w", e.Name, e.OCP, err)
		}
		if c.Check(minor) {
			return e, nil
		}
	}
	return Era{}, fmt.Errorf("OpenShift %d.%d: no storage era declared (supported: %s)", v.Major(), v.Minor(), Supported())
}

// Supported describes the supported minors for error messages.
func Supported() string {
	names := make([]string, 0, len(Table))
	for _, e := range Table {
		names = append(names, e.OCP)
	}
	sort.Strings(names)
	return fmt.Sprint(names)
}

// ReleaseKeys returns the release-JSON keys the era writes, bundle images first.
func (e Era) ReleaseKeys() []string {
	keys := make([]string, 0, len(e.BundleImages)+len(e.PayloadImages))
	for _, k := range e.BundleImages {
		keys = append(keys, k.Key)
	}
	for _, k := range e.PayloadImages {
		keys = append(keys, k.Key)
	}
	return keys
}

// WantBundleMinor is the LVMS bundle minor the era resolves for OpenShift minor ocp ("X.Y").
func (e Era) WantBundleMinor(ocp string) string {
	if e.BundleMinor != "" {
		return e.BundleMinor
	}
	return ocp
}

// IncludesBundleObject reports whether a non-CSV bundle object is shipped in this era.
func (e Era) IncludesBundleObject(kind, name string) bool {
	for _, s := range e.BundleInclude {
		if s.Matches(kind, name) {
			return true
		}
	}
	return false
}

// TemplateKey turns a release-JSON key into the name templates use: MicroShift replaces
// '-' with '_' when it loads the file (pkg/release).
func TemplateKey(key string) string {
	out := []byte(key)
	for i, c := range out {
		if c == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}

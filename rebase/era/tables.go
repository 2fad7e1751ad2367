package era

import "github.com/lvms-rebase/lvms-rebase/applier/eras"

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
	lvmsImages    = []ImageKey{{"lvms-operator", "lvms_operator"}}
	mustGather    = Unshipped{"lvms-must-gather", "must-gather runs from `oc adm must-gather`, never on the node; MicroShift does not ship it"}
	lvmsUnshipped = []Unshipped{mustGather}
	// The TopoLVM-era bundles also carry the operator and OLM-side helpers that MicroShift's
	// own TopoLVM manifests never run.
	topolvmUnshipped = []Unshipped{
		mustGather,
		{"lvms-operator", "MicroShift deploys TopoLVM itself up to 4.16, not the LVMS operator"},
		{"rbac-proxy", "metrics proxy of the operator's OLM deployment; not in MicroShift's TopoLVM manifests"},
		{"topolvm-csi-snapshotter", "MicroShift's topolvm-controller takes csi-external-snapshotter from the OCP payload"},
	}
	snapshotter     = ImageKey{"csi-external-snapshotter", "csi-external-snapshotter"}
	snapshotCtrl    = ImageKey{"csi-snapshot-controller", "csi-snapshot-controller"}
	snapshotWebhook = ImageKey{"csi-snapshot-validation-webhook", "csi-snapshot-validation-webhook"}
	// Up to 4.21 MicroShift splits only the cluster RBAC out of 05_operand_rbac.yaml; from
	// 4.22 (release-4.22, 4.23, 5.x, main) it also ships the leader-election Role and
	// RoleBinding as role.yaml/rolebinding.yaml.
	clusterRBACSplit  = []string{"ClusterRole", "ClusterRoleBinding"}
	allRBACSplit      = []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
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

// OCPRow is what MicroShift and the OCP payload decide, keyed by the OpenShift minor of the
// tree: the snapshot controller's layout and images, and where things run.
type OCPRow struct {
	Name string
	// OCP is a semver constraint over the OpenShift minor "X.Y".
	OCP               string
	Namespace         string
	SnapshotNamespace string
	SnapshotOverlay   string
	// PayloadImages are the image-references tags taken from the payload (release keys).
	PayloadImages []ImageKey
	// SnapshotWebhook: the CSI snapshot validation webhook is shipped (up to 4.17).
	SnapshotWebhook bool
	// SnapshotSplit: see Era.SnapshotSplit.
	SnapshotSplit []string
	// LiteralImages: see Era.LiteralImages (snapshot objects).
	LiteralImages []LiteralImage
	// Records: see Era.Records.
	Records Records
	// Retired: component files this OCP era does not ship (see Retired).
	Retired []Retired
}

// LVMSRow is what the LVMS bundle decides, keyed by the LVMS bundle minor: the driver, the
// CSV objects and webhooks, the bundle images and the overlay that renders them. TopoLVM
// rows also constrain the OpenShift minor: up to 4.16 MicroShift deploys TopoLVM with its
// own per-release manifests (embedded lvmd from 4.16), so the overlay follows both.
type LVMSRow struct {
	Name string
	// LVMS is a semver constraint over the LVMS minor; OCP ("" = any) over the OpenShift minor.
	LVMS         string
	OCP          string
	Driver       Driver
	LVMSOverlay  string
	BundleImages []ImageKey
	// UnshippedImages: see Era.UnshippedImages.
	UnshippedImages []Unshipped
	CSV             CSVPolicy
	BundleInclude   []Selector
	// LiteralImages: see Era.LiteralImages (bundle objects).
	LiteralImages []LiteralImage
	// UnshippedWebhooks, WebhookServices: see Era.
	UnshippedWebhooks []Unshipped
	WebhookServices   []WebhookService
	// SuggestedNamespace: see Era.SuggestedNamespace.
	SuggestedNamespace string
	// Retired: component files this LVMS era does not ship (see Retired).
	Retired []Retired
}

// Policy says which LVMS minor an OpenShift range takes. With Pin set, that minor whatever
// is published. Otherwise the LVMS minor equal to the OpenShift minor when a bundle of it
// is published, else the newest published minor below it, but never below Floor
// ("" = the OpenShift minor itself, no fallback).
type Policy struct {
	OCP   string
	Pin   string
	Floor string
	// Why explains a Pin in the lock file and in resolve's output.
	Why string
}

// OCPTable is the OCP axis, oldest first. Ranges must not overlap and must cover every
// minor from 4.14 to 5.x (a test checks).
var OCPTable = []OCPRow{
	{
		// 4.14-4.16: TopoLVM's csi-snapshotter sidecar and the snapshot validation webhook.
		Name: "ocp-4.14", OCP: ">= 4.14, < 4.17",
		Namespace: eras.StorageNamespace, SnapshotNamespace: eras.SnapshotNamespace,
		SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		PayloadImages:   []ImageKey{snapshotter, snapshotCtrl, snapshotWebhook}, SnapshotWebhook: true,
		SnapshotSplit: clusterRBACSplit,
		Records:       oldRecords, Retired: retiredLeaderElectionSplit,
	},
	{
		Name: "ocp-4.17", OCP: "~4.17",
		Namespace: eras.StorageNamespace, SnapshotNamespace: eras.SnapshotNamespace,
		SnapshotOverlay: "overlays/csi-snapshot-controller/4.14",
		PayloadImages:   []ImageKey{snapshotCtrl, snapshotWebhook}, SnapshotWebhook: true,
		SnapshotSplit: clusterRBACSplit,
		Records:       oldRecords, Retired: retiredLeaderElectionSplit,
	},
	{
		// 4.18: "Remove CSI webhook".
		Name: "ocp-4.18", OCP: ">= 4.18, < 4.22",
		Namespace: eras.StorageNamespace, SnapshotNamespace: eras.SnapshotNamespace,
		SnapshotOverlay: "overlays/csi-snapshot-controller/4.18",
		PayloadImages:   []ImageKey{snapshotCtrl},
		SnapshotSplit:   clusterRBACSplit,
		Records:         newRecords, Retired: append(retiredSnapshotWebhook(), retiredLeaderElectionSplit...),
	},
	{
		// 4.22: MicroShift ships the leader-election Role/RoleBinding as role.yaml and
		// rolebinding.yaml (release-4.22's pkg/components/csi-snapshot-controller.go reads them).
		Name: "ocp-4.22", OCP: ">= 4.22, < 5.0",
		Namespace: eras.StorageNamespace, SnapshotNamespace: eras.SnapshotNamespace,
		SnapshotOverlay: "overlays/csi-snapshot-controller/4.18",
		PayloadImages:   []ImageKey{snapshotCtrl},
		SnapshotSplit:   allRBACSplit,
		Records:         newRecords, Retired: retiredSnapshotWebhook(),
	},
	{
		// 5.x: the 4.22 layout; its own row so that an unknown 6.0 fails instead of guessing.
		Name: "ocp-5", OCP: ">= 5.0, < 6.0",
		Namespace: eras.StorageNamespace, SnapshotNamespace: eras.SnapshotNamespace,
		SnapshotOverlay: "overlays/csi-snapshot-controller/4.18",
		PayloadImages:   []ImageKey{snapshotCtrl},
		SnapshotSplit:   allRBACSplit,
		Records:         newRecords, Retired: retiredSnapshotWebhook(),
	},
}

// LVMSTable is the LVMS axis, oldest first. For any (LVMS, OCP) pair at most one row
// matches (a test checks).
var LVMSTable = []LVMSRow{
	{
		// 4.14 is 4.15 without the kube-public/lvms-version ConfigMap (its overlay drops it).
		Name: "topolvm-4.14", LVMS: "~4.14", OCP: "~4.14", Driver: TopoLVM,
		LVMSOverlay: "overlays/topolvm/4.14", BundleImages: topolvmImages, UnshippedImages: topolvmUnshipped,
		CSV: topolvmCSV, BundleInclude: topolvmBundleObjs, SuggestedNamespace: eras.StorageNamespace,
		Retired: append(retiredLVMSFiles(), retiredVersionConfigMap),
	},
	{
		// 4.15: lvmd still a separate container, lvms-version ConfigMap added.
		Name: "topolvm-4.15", LVMS: "~4.15", OCP: "~4.15", Driver: TopoLVM,
		LVMSOverlay: "overlays/topolvm/4.15", BundleImages: topolvmImages, UnshippedImages: topolvmUnshipped,
		CSV: topolvmCSV, BundleInclude: topolvmBundleObjs, SuggestedNamespace: eras.StorageNamespace, Retired: retiredLVMSFiles(),
	},
	{
		// MicroShift 4.16 embeds lvmd in topolvm-node and ships the LVMS 4.15 bundle's RBAC.
		Name: "topolvm-4.16", LVMS: "~4.15", OCP: "~4.16", Driver: TopoLVM,
		LVMSOverlay: "overlays/topolvm/4.16", BundleImages: topolvmImages, UnshippedImages: topolvmUnshipped,
		CSV: topolvmCSV, BundleInclude: topolvmBundleObjs, SuggestedNamespace: eras.StorageNamespace, Retired: retiredLVMSFiles(),
	},
	{
		Name: "lvms-4.17", LVMS: "~4.17", OCP: ">= 4.17", Driver: LVMS,
		LVMSOverlay: "overlays/lvms/4.17", BundleImages: lvmsImages, UnshippedImages: lvmsUnshipped,
		CSV: lvmsCSV, BundleInclude: lvmsBundleObjs, SuggestedNamespace: eras.StorageNamespace, Retired: retiredTopoLVMFiles(),
	},
	{
		Name: "lvms-4.18", LVMS: ">= 4.18, < 4.20", OCP: ">= 4.17", Driver: LVMS,
		LVMSOverlay: "overlays/lvms/4.18", BundleImages: lvmsImages, UnshippedImages: lvmsUnshipped,
		CSV: lvmsCSV, BundleInclude: lvmsBundleObjs, SuggestedNamespace: eras.StorageNamespace, Retired: retiredTopoLVMFiles(),
	},
	{
		// 4.20+: the CSV suggests openshift-lvm-storage; MicroShift keeps openshift-storage.
		Name: "lvms-4.20", LVMS: ">= 4.20, < 6.0", OCP: ">= 4.17", Driver: LVMS,
		LVMSOverlay: "overlays/lvms/4.20", BundleImages: lvmsImages, UnshippedImages: lvmsUnshipped,
		CSV: lvmsCSV, BundleInclude: lvmsBundleObjs, SuggestedNamespace: "openshift-lvm-storage", Retired: retiredTopoLVMFiles(),
	},
}

// Policies is the LVMS-minor policy per OpenShift range. Ranges must not overlap and must
// cover OCPTable (a test checks). Today every minor from 4.22 to 5.x falls back to 4.21.
var Policies = []Policy{
	{OCP: "~4.14"},
	{OCP: "~4.15"},
	{OCP: "~4.16", Pin: "4.15", Why: "MicroShift 4.16 ships LVMS 4.15, the last bundle with TopoLVM RBAC and sidecar images"},
	{OCP: ">= 4.17, < 6.0", Floor: "4.17"},
}

// Package era declares, as data, what MicroShift ships for each OpenShift minor: which
// storage driver (TopoLVM or the LVMS operator), which kustomize overlays render it, which
// bundle and payload images become which release-JSON keys, and which bundle objects are
// shipped. Every version difference the rebase and the applier act on is a field here or
// in an overlay, never an `if minor >= …` in code.
package era

import (
	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
)

// Driver is the storage implementation MicroShift deploys in an era. The applier names the
// same eras at run time, so the names are declared once, in the applier module's package eras.
type Driver = eras.Driver

const (
	// TopoLVM: MicroShift deploys topolvm-controller and topolvm-node itself (4.14–4.16).
	TopoLVM = eras.TopoLVM
	// LVMS: MicroShift deploys the lvms-operator and an LVMCluster (4.17+).
	LVMS = eras.LVMS
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

// Era is the combined layout of one rebase: an OCP row (what MicroShift and the payload
// decide) joined with an LVMS row (what the LVMS bundle decides). Combine builds it; the
// fields are flat so consumers (bundle, snapshot, render, release) need not know the axes.
type Era struct {
	// Name is the LVMS row's name ("lvms-4.20"); it names golden directories and file-name
	// tables of the bundle side.
	Name string
	// OCPEra is the OCP row's name ("ocp-5"); LVMSMinor is the LVMS bundle minor ("4.21").
	OCPEra    string
	LVMSMinor string
	// OCP is the OCP row's semver constraint over "X.Y".
	OCP string
	// Driver is TopoLVM or LVMS.
	Driver Driver
	// BundleMinor is the LVMS minor the OCP range pins whatever is published (MicroShift
	// 4.16 ships LVMS 4.15, the last bundle with TopoLVM RBAC). "" = chosen by Policies.
	BundleMinor string
	// Namespace is where namespaced LVMS/TopoLVM objects go. MicroShift always uses
	// openshift-storage, whatever the CSV suggests (openshift-lvm-storage from 4.20).
	Namespace string
	// SuggestedNamespace is the namespace every CSV of the era suggests
	// (operatorframework.io/suggested-namespace): the translation ignores it as a known fact
	// when it differs from Namespace, and warns about any other suggestion (new bundle
	// content).
	SuggestedNamespace string
	// SnapshotNamespace is where the CSI snapshot controller runs. The snapshot overlay
	// moves the operator's objects there (its NamespaceTransformer); render refuses a
	// namespaced snapshot object anywhere else, so the two cannot drift apart.
	SnapshotNamespace string
	// LVMSOverlay and SnapshotOverlay are kustomize overlay directories relative to the
	// kustomize root (the repository's base/ and overlays/).
	LVMSOverlay     string
	SnapshotOverlay string
	// BundleImages are the relatedImages every bundle of the era must carry.
	BundleImages []ImageKey
	// UnshippedImages are relatedImages the era knows and deliberately keeps out of the
	// release JSONs (MicroShift's image lists become image-builder [[containers]] entries,
	// so an unused image would be embedded in every edge image). They are reported as not
	// shipped, with the reason; any relatedImage neither here nor in BundleImages is written
	// under DerivedKey with a warning.
	UnshippedImages []Unshipped
	// PayloadImages are the image-references tags taken from the OCP payload.
	PayloadImages []ImageKey
	// CSV is what the CSV's install strategy contributes.
	CSV CSVPolicy
	// BundleInclude selects the bundle's non-CSV manifests MicroShift ships; others are
	// reported as excluded.
	BundleInclude []Selector
	// SnapshotWebhook is true when the CSI snapshot validation webhook is shipped: its
	// operator files are read and translated (rebase/snapshot), and the era's
	// SnapshotOverlay must patch them (overlays/csi-snapshot-controller/4.14).
	SnapshotWebhook bool
	// SnapshotSplit lists the kinds of a kept multi-document snapshot file
	// (05_operand_rbac.yaml) that MicroShift also ships as files of their own.
	SnapshotSplit []string
	// UnshippedWebhooks are CSV webhook definitions (by generateName) the era deliberately
	// leaves out, with the reason; WebhookServices map a webhook whose bundle has no Service
	// for it to a Service MicroShift already runs. Any other webhook must call a shipped
	// bundle Service, or the translation fails.
	UnshippedWebhooks []Unshipped
	WebhookServices   []WebhookService
	// LiteralImages are the registry references a shipped object may carry untemplated (the
	// OCP row's, then the LVMS row's); render refuses any other.
	LiteralImages []LiteralImage
	// Records are the names of the branch's LVMS rebase record and recipe.
	Records Records
	// Retired are the component files the era does not write that a tree may lose, with
	// the reason (the OCP row's and the LVMS row's).
	Retired []Retired
}

// WebhookService is the Service a webhook (by generateName) calls when its bundle ships none:
// one MicroShift already runs.
type WebhookService struct {
	Webhook, Namespace, Name string
	Port                     int32
	Why                      string
}

// LiteralImage allows one registry reference with a tag or digest to stay literal in one
// field of one shipped object: a deliberate exception to "every image comes from the release
// JSONs", with the reason.
type LiteralImage struct {
	Kind, Name string
	// Field is the field path as render names it (spec.template.spec.containers[0].args[1]).
	Field string
	Ref   string
	Why   string
}

// AllowsLiteral reports whether ref may stay literal in that field of that object.
func (e Era) AllowsLiteral(kind, name, field, ref string) bool {
	for _, l := range e.LiteralImages {
		if l.Kind == kind && l.Name == name && l.Field == field && l.Ref == ref {
			return true
		}
	}
	return false
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

// IncludesBundleObject reports whether a non-CSV bundle object is shipped in this era.
func (e Era) IncludesBundleObject(kind, name string) bool {
	for _, s := range e.BundleInclude {
		if s.Matches(kind, name) {
			return true
		}
	}
	return false
}

// Unshipped names a relatedImage an era deliberately does not ship, and why.
type Unshipped struct {
	Name string
	Why  string
}

// DerivedKey is the release-JSON key of a bundle relatedImage no era declares: its name with
// '-' replaced by '_' — the rule MicroShift's rebase_lvms.sh applies to every name it takes
// (lvms-operator → lvms_operator), so a key declared later for the same image is the same.
// Such an image is still written and templated, with a warning asking to declare it.
func DerivedKey(relatedImageName string) string {
	return releasefile.TemplateKey(relatedImageName)
}

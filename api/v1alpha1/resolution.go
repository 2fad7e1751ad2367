package v1alpha1

// Resolution is what resolution picked for one OpenShift minor: the LVMS bundle, the release
// payload per arch, and every relatedImage's per-arch digests. It is `resolve`'s document and
// a RebaseResult's resolution (there without apiVersion and kind).
type Resolution struct {
	TypeMeta `json:",inline"`
	// OCP is the OpenShift minor ("4.18").
	OCP string `json:"ocp"`
	// Bundle is the LVMS operator bundle chosen.
	Bundle BundleRef `json:"bundle"`
	// Payloads are the release payloads chosen, one per arch, in MicroShift's arch order.
	Payloads []PayloadRef `json:"payloads"`
	// RelatedImages are the bundle's relatedImages with their per-arch digests.
	RelatedImages []ImageDigests `json:"relatedImages"`
	// LVMS is the LVMS minor chosen for OCP and why.
	LVMS *LVMSChoice `json:"lvms,omitempty"`
	// PayloadRule says how the payloads were chosen: "newest", "pinned" or "tree".
	PayloadRule string `json:"payloadRule,omitempty"`
	// Warnings are things a maintainer should know (a newer z for some arches only, …).
	Warnings []string `json:"warnings,omitempty"`
}

// BundleRef is the chosen bundle image.
type BundleRef struct {
	// Ref is the canonical reference (repo:tag, repo@digest or oci:…).
	Ref string `json:"ref"`
	// Digest is the manifest digest the reference resolved to.
	Digest string `json:"digest"`
	// Version is the bundle tag (v4.18.4-2), or the CSV version for digest pins.
	Version string `json:"version"`
	// CSVVersion is the CSV's spec.version.
	CSVVersion string `json:"csvVersion,omitempty"`
}

// PayloadRef is the chosen release payload of one arch.
type PayloadRef struct {
	// Arch is the MicroShift arch name (x86_64, aarch64).
	Arch string `json:"arch"`
	// Ref is the canonical reference.
	Ref string `json:"ref"`
	// Digest is the single-arch image digest (the child when Ref names a manifest list).
	Digest string `json:"digest"`
	// ListDigest is set when Ref names a manifest list (a -multi payload).
	ListDigest string `json:"listDigest,omitempty"`
	// Version is release-metadata's version.
	Version string `json:"version"`
}

// ImageDigests are the digests of one (usually multi-arch) image.
type ImageDigests struct {
	// Name is the relatedImages name, when the image came from a CSV.
	Name string `json:"name,omitempty"`
	// Image is the canonical reference as given.
	Image string `json:"image"`
	// ListDigest is the manifest-list digest; empty for a single-arch image.
	ListDigest string `json:"listDigest,omitempty"`
	// Arches are the per-arch child digests, in MicroShift's arch order.
	Arches []ArchDigest `json:"arches"`
}

// ArchDigest is one arch's image digest.
type ArchDigest struct {
	// Arch is the MicroShift arch name.
	Arch string `json:"arch"`
	// Digest is the image digest (sha256:<hex>).
	Digest string `json:"digest"`
}

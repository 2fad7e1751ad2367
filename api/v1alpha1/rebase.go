package v1alpha1

// RebaseResult is what a rebase did (a write) or would do (--dry-run, --diff, --check): the
// inputs it chose, the files it changes, what a reviewer must look at, and what it cost.
type RebaseResult struct {
	TypeMeta `json:",inline"`
	// OCP is the OpenShift minor rebased to ("4.18").
	OCP string `json:"ocp"`
	// Era is the era row the run used (the combination of OCPEra and the LVMS minor).
	Era string `json:"era"`
	// OCPEra is the OpenShift era row's name ("ocp-5").
	OCPEra string `json:"ocpEra"`
	// LVMS is the LVMS minor chosen for OCP and why.
	LVMS *LVMSChoice `json:"lvms,omitempty"`
	// PayloadRule says how the payloads were chosen: "newest" (newest GA z common to every
	// arch), "pinned" (--ocp-release*, or the lock) or "tree" (last_rebase.sh).
	PayloadRule string `json:"payloadRule"`
	// PayloadSource names the file the "tree" rule read (last_rebase.sh).
	PayloadSource string `json:"payloadSource,omitempty"`
	// Mode is "write", "dry-run", "diff" or "check".
	Mode string `json:"mode"`
	// Resolution is everything the run resolved: bundle, payloads and relatedImages digests
	// (null when resolution failed).
	Resolution *Resolution `json:"resolution"`
	// BundleVersion is the LVMS bundle's version (its tag).
	BundleVersion string `json:"bundleVersion"`
	// PayloadVersion is the payloads' release-metadata version.
	PayloadVersion string `json:"payloadVersion"`
	// SnapshotCommit is the cluster-csi-snapshot-controller-operator commit the payloads name.
	SnapshotCommit string `json:"snapshotCommit"`
	// Images are the image references written per arch: arch → release-JSON key → reference.
	Images map[string]map[string]string `json:"images"`
	// ReleaseChanges are the keys each release-<arch>.json gained, changed and lost, by arch.
	ReleaseChanges map[string]*ReleaseChange `json:"releaseChanges,omitempty"`
	// Plan are the files the run adds, changes and removes (null when the run got no further
	// than planning).
	Plan *Plan `json:"plan"`
	// SemanticChanges are the changed files whose content changed in meaning (a subset of
	// plan.change).
	SemanticChanges []string `json:"semanticChanges,omitempty"`
	// FormattingChanges are the changed files that changed only in formatting (a subset of
	// plan.change).
	FormattingChanges []string `json:"formattingChanges,omitempty"`
	// Diff is the unified diff of --diff (git's format).
	Diff string `json:"diff,omitempty"`
	// Excluded are the bundle's objects the era does not ship, each with the reason.
	Excluded []ExcludedObject `json:"excluded,omitempty"`
	// RecipeChanges are the entries added to and dropped from MicroShift's asset recipes.
	RecipeChanges []RecipeChange `json:"recipeChanges,omitempty"`
	// Retired are the component files the tree shipped that the run removes because the era
	// declares them retired, each with the reason.
	Retired []RetiredFile `json:"retired,omitempty"`
	// UndeclaredImages are relatedImages the era table does not name, written under derived
	// keys; each also has a warning.
	UndeclaredImages []BundleImage `json:"undeclaredImages,omitempty"`
	// ImageUses are the release placeholders of the rendered files, by file and field.
	ImageUses []ImageUse `json:"imageUses,omitempty"`
	// RBAC reviews the RBAC the run ships against the tree's (absent with --check).
	RBAC *RBACReview `json:"rbac,omitempty"`
	// Warnings are what a maintainer should know, each once, in the order the steps declare.
	Warnings []string `json:"warnings,omitempty"`
	// Phases are the run's steps that ran, in their declared order, each with the time it
	// worked.
	Phases []Phase `json:"phases"`
	// Fetched counts the bytes and blobs pulled per image (bundle, payloads, then what
	// resolution and the snapshot assets read besides).
	Fetched []FetchStats `json:"fetched"`
	// Commits are the commits --commit made, oldest first.
	Commits []string `json:"commits,omitempty"`
	// Uncommitted are the files lvms-rebase writes that differ from HEAD after a run without
	// --commit in a git work tree: "no changes" means no change to the tree, not that it
	// matches what is committed.
	Uncommitted []string `json:"uncommitted,omitempty"`
	// Drift is true when --check found the tree or the lock differing from what the lock's
	// inputs render.
	Drift bool `json:"drift"`
	// LockDrift lists where the lock file differs from its files and inputs (--check).
	LockDrift []string `json:"lockDrift,omitempty"`
	// Recovered lists interrupted writes of earlier runs that this run repaired first.
	Recovered []Recovery `json:"recovered,omitempty"`
	// Provenance says, per digest written or used, which key signed it for which identity, or
	// why it is unsigned. Absent when --check verified none (a lock written before signatures
	// were verified). The lock records the same object under provenance.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Provenance is what proved the digests of a run: the policy and a record per digest.
type Provenance struct {
	// Policy is "built-in" or the policy file's digest ("sha256:<hex>").
	Policy string `json:"policy"`
	// PolicyFile is the path of the policy file given (never in the lock: a path of one machine).
	PolicyFile string `json:"policyFile,omitempty"`
	// AllowUnsigned says the run accepted digests without a valid signature (--allow-unsigned).
	AllowUnsigned bool `json:"allowUnsigned,omitempty"`
	// Records are sorted by image, then role, then digest.
	Records []ProvenanceRecord `json:"records"`
}

// ProvenanceRecord is what was verified for one digest a run writes or uses.
type ProvenanceRecord struct {
	// Role says what the digest is: "bundle", "payload x86_64", or the release key and arch of
	// an image ("lvms_operator x86_64").
	Role string `json:"role"`
	// Image is the canonical repository.
	Image string `json:"image"`
	// Digest is the digest written or used.
	Digest string `json:"digest"`
	// Status is "signed", "covered" (named by digest inside the verified payload CoveredBy) or
	// "unsigned" (Reason says why it was accepted).
	Status string `json:"status"`
	// Scope is the policy scope whose requirements applied.
	Scope string `json:"scope,omitempty"`
	// Signatures are the signatures that met the requirements, one per requirement.
	Signatures []Signature `json:"signatures,omitempty"`
	// CoveredBy names the verified payload ("<repository>@<digest>") of a covered digest.
	CoveredBy string `json:"coveredBy,omitempty"`
	// Reason says why an unsigned digest was accepted.
	Reason string `json:"reason,omitempty"`
}

// Signature is one verified signature.
type Signature struct {
	// Format is "atomic" (an OpenPGP atomic container signature from a signature store) or
	// "cosign" (a simple-signing payload in a .sig manifest).
	Format string `json:"format"`
	// Key is the fingerprint of the key that made it: OpenPGP, or sha256:<hex> of a sigstore
	// key's PKIX form.
	Key string `json:"key"`
	// KeyName is the key's name, when it has one.
	KeyName string `json:"keyName,omitempty"`
	// Class is "redhat", "redhat-beta" or "openshift-ci" for the keys lvms-rebase knows.
	Class string `json:"class,omitempty"`
	// Identity is the docker-reference the signature claims.
	Identity string `json:"identity"`
	// SignedDigest is the digest the signature names when it is not the record's own: the
	// manifest list the written per-arch digest was chosen from.
	SignedDigest string `json:"signedDigest,omitempty"`
	// Store is the signature store of an atomic signature (<store>/sha256=<hex>/signature-<n>).
	Store string `json:"store,omitempty"`
	// N is the atomic signature's number in the store.
	N int `json:"n,omitempty"`
	// Sig is the digest of the .sig manifest a cosign signature came from.
	Sig string `json:"sig,omitempty"`
	// Layer is the cosign signature's layer in that manifest.
	Layer int `json:"layer,omitempty"`
	// SHA256 is the digest of the signature file (atomic) or of the signed payload (cosign).
	SHA256 string `json:"sha256"`
}

// LVMSChoice is the LVMS minor picked for an OpenShift minor, and why.
type LVMSChoice struct {
	// Minor is the LVMS minor ("4.18").
	Minor string `json:"minor"`
	// Rule is "exact" (same minor as OpenShift), "pinned" (the era table pins it),
	// "newest-below" (no bundle of the OpenShift minor; the newest older one), "flag" (--lvms),
	// "bundle" (--lvms-bundle) or "lock" (--check).
	Rule string `json:"rule"`
	// Reason says why, in words.
	Reason string `json:"reason"`
	// Warning is set when the choice lags the OpenShift minor.
	Warning string `json:"warning,omitempty"`
}

// ReleaseChange lists the release-JSON keys a run added, updated and removed, each in file
// order. Its field names are capitalised, as they were printed before v1alpha1 was declared;
// each list is null when empty.
type ReleaseChange struct {
	// Added are the keys the file gained.
	Added []string `json:"Added"`
	// Updated are the keys whose reference changed.
	Updated []string `json:"Updated"`
	// Removed are the keys the file lost.
	Removed []string `json:"Removed"`
}

// Plan says what a write does (or did) to each path, relative to the MicroShift checkout's
// root; every list is sorted and left out when empty.
type Plan struct {
	// Add are the files the run creates.
	Add []string `json:"add,omitempty"`
	// Change are the files whose bytes the run changes.
	Change []string `json:"change,omitempty"`
	// Remove are the files the run deletes.
	Remove []string `json:"remove,omitempty"`
	// Unchanged are the files the run writes with the bytes they have.
	Unchanged []string `json:"unchanged,omitempty"`
}

// ExcludedObject is a bundle or CSV-derived object the era does not ship.
type ExcludedObject struct {
	// File is the bundle file it came from (the CSV file for CSV-derived objects).
	File string `json:"file"`
	// Kind is the object kind, or "clusterPermissions"/"permissions" for a whole CSV entry.
	Kind string `json:"kind"`
	// Name is the object's name.
	Name string `json:"name"`
	// Reason says why the era does not ship it.
	Reason string `json:"reason"`
}

// RecipeChange is what the run did to one component's entry in an asset recipe.
type RecipeChange struct {
	// Recipe is the recipe file, relative to the checkout's root.
	Recipe string `json:"recipe"`
	// Dir is the component directory the entry lists.
	Dir string `json:"dir"`
	// Added are the file names the entry gained.
	Added []string `json:"added,omitempty"`
	// Dropped are the file names the entry lost.
	Dropped []string `json:"dropped,omitempty"`
}

// RetiredFile is a component file a run removes because its era declares it retired.
type RetiredFile struct {
	// Path is the file, relative to the checkout's root.
	Path string `json:"path"`
	// Why is the era's reason.
	Why string `json:"why"`
}

// BundleImage is one relatedImage of the bundle.
type BundleImage struct {
	// Name is the CSV relatedImages name (lvms-operator).
	Name string `json:"name"`
	// Key is the release-JSON key (lvms_operator).
	Key string `json:"key"`
	// Ref is the relatedImages reference (a manifest-list digest reference).
	Ref string `json:"ref"`
	// Undeclared is true for a relatedImage the era table does not name: its key is derived
	// from its name.
	Undeclared bool `json:"undeclared,omitempty"`
}

// ImageUse is one release placeholder in a shipped file: where an image of the release JSONs
// is used.
type ImageUse struct {
	// File is the rendered file, relative to the checkout's root.
	File string `json:"file"`
	// Kind is the kind of the object using the image.
	Kind string `json:"kind"`
	// Name is that object's name.
	Name string `json:"name"`
	// Field is the path of the field holding the placeholder.
	Field string `json:"field"`
	// Key is the release-JSON key the placeholder names.
	Key string `json:"key"`
}

// RBACReview is the review of the RBAC a rebase ships against the tree's.
type RBACReview struct {
	// Changed is true when a role, binding or rule was added, removed or changed.
	Changed bool `json:"changed"`
	// Changes are the rules and bindings added and removed (class "added" or "removed").
	Changes []RBACFinding `json:"changes,omitempty"`
	// Escalations are the added access a security review must look at.
	Escalations []RBACFinding `json:"escalations,omitempty"`
}

// RBACFinding is one RBAC change.
type RBACFinding struct {
	// Role is the role or binding.
	Role string `json:"role"`
	// Rule is the rule, in words.
	Rule string `json:"rule"`
	// Class is an escalation's class (secrets, wildcard, escalate-bind-impersonate,
	// cluster-write, nodes-exec, admin-binding) or, for a plain change, "added" or "removed".
	Class string `json:"class"`
}

// Phase is one step of a run with the time it worked.
type Phase struct {
	// Name is the step's name (resolve, fetch-payloads, translate, render-lvms,
	// snapshot-assets, render, images, records, review, write).
	Name string `json:"name"`
	// Duration is the time the step worked, from its inputs being ready to its end, to the
	// microsecond.
	Duration Duration `json:"duration"`
}

// FetchStats counts what fetching one image cost.
type FetchStats struct {
	// Image is the canonical reference fetched ("resolve and snapshot assets" for the rest).
	Image string `json:"image"`
	// BytesFetched is the compressed blob bytes downloaded from the network.
	BytesFetched int64 `json:"bytesFetched"`
	// BlobsFetched counts the blobs downloaded.
	BlobsFetched int `json:"blobsFetched"`
	// BlobsCached counts the blobs served from the cache.
	BlobsCached int `json:"blobsCached"`
	// LayersRead is how many layers were opened.
	LayersRead int `json:"layersRead"`
	// LayersTotal is how many layers the image has.
	LayersTotal int `json:"layersTotal"`
	// Files are the extracted paths, sorted.
	Files []string `json:"files"`
}

// Recovery says what a run did, or a run that may not write would do, with one interrupted
// write of an earlier run.
type Recovery struct {
	// Dir is the interrupted write's work directory, relative to the checkout's root.
	Dir string `json:"dir"`
	// Action is "rolled back", "rolled forward", "discarded" (staging only, tree untouched) or
	// "left alone" (a directory named like a work directory that no write of this tool made in
	// this checkout, e.g. a person's; never deleted, see reason).
	Action string `json:"action"`
	// Reason says why a directory was left alone, or what was kept of a recovered one.
	Reason string `json:"reason,omitempty"`
	// Pending is true when nothing was done: the action is what a writing run would do.
	Pending bool `json:"pending,omitempty"`
	// Paths are the files the interrupted write covered.
	Paths []string `json:"paths,omitempty"`
	// Conflicts are the files left alone because their bytes or mode are neither the journaled
	// old nor new ones.
	Conflicts []RecoveryConflict `json:"conflicts,omitempty"`
}

// RecoveryConflict is one file a recovery does not touch, with why and what to do about it.
type RecoveryConflict struct {
	// Path is the file, relative to the checkout's root.
	Path string `json:"path"`
	// Problem says what is wrong with it.
	Problem string `json:"problem"`
	// Resolve says what a person should do.
	Resolve string `json:"resolve"`
}

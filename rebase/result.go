package rebase

import (
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// The library's face: what a caller gives Run and what it gets back.

// Mode says what Run does with the rendered files.
type Mode string

const (
	// ModeWrite writes the files into the checkout (the default).
	ModeWrite Mode = "write"
	// ModeDryRun only plans: references, digests, files to add/change/remove.
	ModeDryRun Mode = "dry-run"
	// ModeDiff plans and produces a unified diff against the checkout.
	ModeDiff Mode = "diff"
	// ModeCheck re-renders from the lock file's inputs and reports drift.
	ModeCheck Mode = "check"
)

// ErrDrift is returned (wrapped) by ModeCheck when the tree differs from what the lock renders.
var ErrDrift = errors.New("the MicroShift tree differs from what the lock file's inputs render")

// Options configure one run.
type Options struct {
	// OCP is the OpenShift minor "X.Y". Empty: the minor of the tree's release.base (with
	// ModeCheck, the lock file's). A given OCP that differs from the tree's is ErrUsage
	// unless AllowBaseMismatch.
	OCP               string
	AllowBaseMismatch bool
	// LVMS forces the LVMS bundle minor "X.Y"; empty applies the era policy (era.Choose).
	LVMS string
	// Payload is the payload rule: "" (tree when the tree has last_rebase.sh, else newest),
	// PayloadTree or PayloadNewest. Pins in Source.ReleaseRefs win over both.
	Payload string
	// MicroShiftDir is the root of the MicroShift checkout (default ".").
	MicroShiftDir string
	// Source configures registries, auth, mirrors, cache and pins.
	Source source.Options
	// SnapshotAssets is a per-file URL template with {commit} and {path}, an archive URL
	// template with {commit}, a directory or a tarball (default snapshot.DefaultSource).
	SnapshotAssets string
	// Mode selects write, dry-run, diff or check (default write).
	Mode Mode
	// Commit makes git commits in the checkout per phase (lock, images, manifests).
	Commit bool
	// CommitMessage, with Commit, makes one commit with this message instead of one per phase.
	CommitMessage string
	// PRBody, when set, is a file to write a markdown pull-request body to.
	PRBody string
	// Kustomize is the tree with base/ and overlays/ (normally lvmsrebase.Kustomize).
	Kustomize fs.FS
	// ToolVersion is recorded in the lock file.
	ToolVersion string
	// Provenance configures the signature check of every digest the run writes (verify.go).
	Provenance ProvenanceOptions
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
}

// Result is what a run did or would do (`-o json|yaml` prints it as api/v1alpha1's
// RebaseResult, mapped by internal/output).
type Result struct {
	OCP            string
	Era            string
	OCPEra         string
	LVMS           *era.Choice
	PayloadRule    string
	PayloadSource  string
	Mode           Mode
	Resolution     *source.Resolution
	BundleVersion  string
	PayloadVersion string
	SnapshotCommit string
	Images         map[string]map[string]string // arch -> key -> ref
	ReleaseChanges map[string]*release.Change
	Changes        *tree.Changes // the files the run adds, changes and removes
	// Semantic are the changed files whose content changed in meaning; Formatting those
	// that changed only in formatting (both subsets of Changes.Change).
	Semantic   []string
	Formatting []string
	Diff       string
	Excluded   []bundle.Excluded
	// RecipeChanges are the entries added to and dropped from MicroShift's asset recipes.
	RecipeChanges []recipe.Change
	// Retired are the component files the tree shipped that the run removes because the
	// era declares them retired, each with the reason.
	Retired []RetiredFile
	// UndeclaredImages are relatedImages the era table does not name, written under derived
	// keys (era.DerivedKey); each also has a warning.
	UndeclaredImages []bundle.Image
	// ImageUses are the release placeholders of the rendered files, by file and field.
	ImageUses []render.ImageUse
	// RBAC reviews the RBAC the run ships against the tree's (not with --check).
	RBAC     *review.RBAC
	Warnings []string
	Phases   []Phase
	Fetched  []source.FetchStats // bytes pulled per image (bundle, payloads)
	Commits  []string
	// Uncommitted are the files lvms-rebase writes that differ from HEAD after a run without
	// --commit in a git work tree: "no changes" means no change to the tree, not that it
	// matches what is committed.
	Uncommitted []string
	Drift       bool
	// LockDrift lists where the lock file differs from its files and inputs (--check).
	LockDrift []string
	// Recovered lists interrupted writes of earlier runs that this run repaired first.
	Recovered []tree.Recovery
	// Provenance says, per digest written or used, which key signed it for which identity, or
	// why it is unsigned (absent when --check verified none: a lock that records none).
	Provenance *provenance.Report

	old *lock.Lock // the lock found in the tree before the run, for the PR body
}

// Phase is one timed step of a run: the time it worked.
type Phase struct {
	Name     string
	Duration time.Duration
}

// RetiredFile is a component file a run removes because its era declares it retired.
type RetiredFile struct {
	Path string
	Why  string
}

// ErrPendingRecovery is wrapped when a run that must not modify the tree (dry-run, diff,
// check) finds an interrupted write that only a writing run may repair: planning against a
// half-swapped tree would report nonsense.
var ErrPendingRecovery = errors.New("an interrupted lvms-rebase write is pending")

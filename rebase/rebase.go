// Package rebase runs the job behind `lvms-rebase --ocp X.Y`: resolve the LVMS bundle and
// the OCP payloads, fetch what is needed, translate the CSV and the snapshot-controller
// assets, take per-arch image digests into the release JSONs, render the era's kustomize
// overlays and write the result, with a lock file, into a MicroShift checkout — atomically.
//
// Every phase works in a private staging directory; the checkout is touched only by the
// final tree.Write, which either replaces all files or leaves the tree byte-identical.
package rebase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/prbody"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
	"github.com/lvms-rebase/lvms-rebase/release"
)

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
	// PRBody, when set, is a file to write a markdown pull-request body to.
	PRBody string
	// Kustomize is the tree with base/ and overlays/ (normally lvmsrebase.Kustomize).
	Kustomize fs.FS
	// ToolVersion is recorded in the lock file.
	ToolVersion string
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
}

// Result is what a run did or would do; it is also the `-o json` document.
type Result struct {
	OCP            string                       `json:"ocp"`
	Era            string                       `json:"era"`
	OCPEra         string                       `json:"ocpEra"`
	LVMS           *era.Choice                  `json:"lvms,omitempty"`
	PayloadRule    string                       `json:"payloadRule"`
	PayloadSource  string                       `json:"payloadSource,omitempty"`
	Mode           Mode                         `json:"mode"`
	Resolution     *source.Resolution           `json:"resolution"`
	BundleVersion  string                       `json:"bundleVersion"`
	PayloadVersion string                       `json:"payloadVersion"`
	SnapshotCommit string                       `json:"snapshotCommit"`
	Images         map[string]map[string]string `json:"images"` // arch -> key -> ref
	ReleaseChanges map[string]*release.Change   `json:"releaseChanges,omitempty"`
	Changes        *tree.Changes                `json:"plan"` // the files the run adds, changes and removes
	// Semantic are the changed files whose content changed in meaning; Formatting those
	// that changed only in formatting (both subsets of Changes.Change).
	Semantic   []string          `json:"semanticChanges,omitempty"`
	Formatting []string          `json:"formattingChanges,omitempty"`
	Diff       string            `json:"diff,omitempty"`
	Excluded   []bundle.Excluded `json:"excluded,omitempty"`
	// RecipeChanges are the entries added to and dropped from MicroShift's asset recipes.
	RecipeChanges []recipe.Change `json:"recipeChanges,omitempty"`
	// Retired are the component files the tree shipped that the run removes because the
	// era declares them retired, each with the reason.
	Retired []RetiredFile `json:"retired,omitempty"`
	// UndeclaredImages are relatedImages the era table does not name, written under derived
	// keys (era.DerivedKey); each also has a warning.
	UndeclaredImages []bundle.Image `json:"undeclaredImages,omitempty"`
	// ImageUses are the release placeholders of the rendered files, by file and field.
	ImageUses []render.ImageUse `json:"imageUses,omitempty"`
	// RBAC reviews the RBAC the run ships against the tree's (not with --check).
	RBAC     *review.RBAC        `json:"rbac,omitempty"`
	Warnings []string            `json:"warnings,omitempty"`
	Phases   []Phase             `json:"phases"`
	Fetched  []source.FetchStats `json:"fetched"` // bytes pulled per image (bundle, payloads)
	Commits  []string            `json:"commits,omitempty"`
	Drift    bool                `json:"drift"`
	// LockDrift lists where the lock file differs from its files and inputs (--check).
	LockDrift []string `json:"lockDrift,omitempty"`
	// Recovered lists interrupted writes of earlier runs that this run repaired first.
	Recovered []tree.Recovery `json:"recovered,omitempty"`

	old *lock.Lock // the lock found in the tree before the run, for the PR body
}

// Phase is one timed step of a run. In JSON its duration is a Go duration string ("1.5s"),
// not nanoseconds (docs/output.md).
type Phase struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
}

type phaseJSON struct {
	Name     string `json:"name"`
	Duration string `json:"duration"`
}

// MarshalJSON writes the duration as a Go duration string.
func (p Phase) MarshalJSON() ([]byte, error) {
	return json.Marshal(phaseJSON{p.Name, p.Duration.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Phase) UnmarshalJSON(data []byte) error {
	var j phaseJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	d, err := time.ParseDuration(j.Duration)
	if err != nil {
		return fmt.Errorf("phase %s: duration: %w", j.Name, err)
	}
	*p = Phase{Name: j.Name, Duration: d}
	return nil
}

type runner struct {
	opts   Options
	log    *slog.Logger
	src    *source.Source
	era    era.Era
	work   string
	result *Result
	// lockImages collects, per release key, the digests written for the lock file.
	lockImages []lock.ImageDigests
	// releaseData are the tree's release JSONs per arch, read and checked by preflight.
	releaseData map[string][]byte
	// newLock is the lock this run's inputs produce (compared with the tree's by --check).
	newLock *lock.Lock
	// fetching names the input the current phase is fetching, for interruption messages.
	fetching string
	// mu guards result.Warnings: the source warns from its parallel fetches.
	mu sync.Mutex

	// What the phases produce, in order: the architectures (from the source options), the
	// bundle and payloads, the snapshot assets and their translation, the bundle's
	// translation, the image references per arch, and the files to write with the
	// directories the run manages.
	arches     []string
	bundle     *bundle.Bundle
	payloads   map[string]*payload.Payload
	assets     *snapshot.Assets
	snap       *snapshot.Result
	translated *bundle.Result
	archImages map[string]map[string]string
	files      map[string][]byte
	managed    []string
	// recordPaths are the bundle records the run writes (the branch's own names).
	recordPaths []string
	// recorded is what the tree recorded before the run (the PR body's "before").
	recorded *recorded.Recorded
	// lanes do the fetches and what depends only on them ahead of the phases (lanes.go).
	lanes *lanes
}

// RetiredFile is a component file a run removes because its era declares it retired.
type RetiredFile struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Run performs the rebase described by opts.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.MicroShiftDir == "" {
		opts.MicroShiftDir = "."
	}
	if opts.Mode == "" {
		opts.Mode = ModeWrite
	}
	if opts.Kustomize == nil {
		return nil, errors.New("rebase: Options.Kustomize is required")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(opts.MicroShiftDir)
	if err != nil {
		return nil, &option.Error{Option: option.MicroShiftDir, Err: err}
	}
	opts.MicroShiftDir = root

	r := &runner{opts: opts, log: logger(opts.Logger), result: &Result{Mode: opts.Mode}}
	unlock, err := tree.Lock(root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := r.recoverTree(); err != nil {
		return r.result, err
	}
	old, err := readLock(root)
	if err != nil {
		return nil, err
	}
	r.result.old = old
	if r.opts.PRBody != "" {
		// An unreadable record leaves the PR body's "before" column empty; the run itself
		// reports the unreadable file (preflight reads the release JSONs).
		r.recorded, _ = recorded.Read(os.DirFS(root))
	}
	if err := r.prepare(old); err != nil {
		return nil, err
	}
	if r.opts.SnapshotAssets == "" {
		r.opts.SnapshotAssets = snapshot.DefaultSource
	}
	if _, err := era.ParseMinor(r.opts.OCP); err != nil {
		return nil, fmt.Errorf("%s %w", option.OCP, err)
	}
	if _, err := era.OCPRowFor(r.opts.OCP); err != nil {
		return nil, err
	}
	r.result.OCP = r.opts.OCP

	r.opts.Source.Logger = r.sourceLogger(r.opts.Source.Logger)
	if r.src, err = source.New(r.opts.Source); err != nil {
		return nil, err
	}
	if err := r.preflight(); err != nil {
		return nil, err
	}
	if r.work, err = os.MkdirTemp("", "lvms-rebase-"); err != nil {
		return nil, fmt.Errorf("creating a work directory: %w", err)
	}
	defer os.RemoveAll(r.work)

	if err := r.run(ctx); err != nil {
		return r.result, err
	}
	return r.result, nil
}

// prepare settles the inputs before any network access: with --check the lock's pins;
// otherwise the OpenShift minor (given or the tree's) and the payload rule.
func (r *runner) prepare(old *lock.Lock) error {
	if r.opts.Mode == ModeCheck {
		if old == nil {
			return fmt.Errorf("%s: no lock file %s in %s; run a rebase first", option.Check, lock.Path, r.opts.MicroShiftDir)
		}
		r.result.PayloadRule, r.result.PayloadSource = old.PayloadRule, old.PayloadSource
		return pinFromLock(&r.opts, old)
	}
	var err error
	if r.opts.OCP, err = chooseOCP(r.opts.OCP, r.opts.MicroShiftDir, r.opts.AllowBaseMismatch); err != nil {
		return err
	}
	r.result.PayloadRule, r.result.PayloadSource, err = choosePayloads(&r.opts)
	return err
}

// ErrPendingRecovery is wrapped when a run that must not modify the tree (dry-run, diff,
// check) finds an interrupted write that only a writing run may repair: planning against a
// half-swapped tree would report nonsense.
var ErrPendingRecovery = errors.New("an interrupted lvms-rebase write is pending")

// recoverTree repairs a write that an earlier, killed run left half done, and says so: the
// tree is then either as before that run or as it wrote it, never a mix (files changed since
// are left alone and reported). A run in a read-only mode only reports what is pending; it
// stops when a journaled write is, and goes on past a mere staging (the tree is untouched).
func (r *runner) recoverTree() error {
	recover := tree.Recover
	if r.opts.Mode != ModeWrite {
		recover = tree.Pending
	}
	recs, err := recover(r.opts.MicroShiftDir)
	if err == nil && r.opts.Mode != ModeWrite {
		var pending []string
		for _, rec := range recs {
			if rec.Action != "discarded" {
				pending = append(pending, rec.String())
			}
		}
		if len(pending) > 0 {
			err = fmt.Errorf("%w (mode %s modifies nothing; a write run repairs it first): %s", ErrPendingRecovery, r.opts.Mode, strings.Join(pending, "; "))
		}
	}
	for _, rec := range recs {
		r.warn(rec.String(), "dir", rec.Dir, "action", rec.Action)
	}
	r.result.Recovered = recs
	return err
}

// warn records a warning of the run where it arises: on stderr at once, in Result.Warnings
// (the summary, -o json) and, verbatim, in the PR body's Warnings section.
func (r *runner) warn(msg string, attrs ...any) {
	r.recordWarning(msg)
	r.log.Warn(msg, attrs...)
}

// phase runs f and records and logs its duration. A run stopped by its context (SIGINT,
// --timeout) says so, with the phase and the input it was fetching.
func (r *runner) phase(ctx context.Context, name string, f func() error) error {
	start := time.Now()
	r.fetching = ""
	// At the default verbosity a phase prints one line, when it ends, with its duration; -v 1
	// (a record at V(1) has slog level -1) adds when it starts.
	r.log.Log(ctx, slog.Level(-1), "phase "+name, "phase", name, "state", "start")
	err := f()
	if err != nil && ctx.Err() != nil {
		what := ""
		if r.fetching != "" {
			what = " while fetching " + r.fetching
		}
		err = fmt.Errorf("%v in phase %s%s: %w", context.Cause(ctx), name, what, err)
	}
	d := time.Since(start).Round(time.Millisecond)
	r.result.Phases = append(r.result.Phases, Phase{Name: name, Duration: d})
	if errors.Is(err, ErrDrift) {
		// Drift is --check's answer, not a failure of the tool.
		r.log.Warn("phase "+name+": drift found", "phase", name, "took", d.String())
		return err
	}
	if err != nil {
		// The error itself is returned and printed once by the caller, not logged here too.
		r.log.Error("phase "+name+" failed", "phase", name, "took", d.String())
		return err
	}
	r.log.Info("phase "+name+" done", "phase", name, "took", d.String())
	return nil
}

// step is one phase of a run: its name as the phase lines print it, the method that does
// it, and what runs after it outside any phase (bookkeeping that is not timed).
type step struct {
	name  string
	run   func(context.Context) error
	after func() error
}

// steps are the phases of a run, in order. Each works on the runner's state, which the
// earlier phases filled in.
func (r *runner) steps() []step {
	return []step{
		{name: "resolve", run: r.resolve},
		{name: "fetch-bundle", run: r.fetchBundle},
		{name: "fetch-payloads", run: r.fetchPayloads},
		{name: "snapshot-assets", run: r.snapshotAssets, after: func() error { r.countUnattributed(); return nil }},
		{name: "translate", run: r.translate},
		{name: "images", run: r.images},
		{name: "render", run: r.render, after: r.addLockAndRecipes},
		{name: "write", run: r.write},
	}
}

func (r *runner) run(ctx context.Context) error {
	// The lanes resolve starts end with the run, whatever phase it stops in.
	defer func() { r.lanes.stop() }()
	r.arches = r.src.Arches()
	r.files = map[string][]byte{}
	for _, s := range r.steps() {
		if err := r.phase(ctx, s.name, func() error { return s.run(ctx) }); err != nil {
			return err
		}
		if s.after == nil {
			continue
		}
		if err := s.after(); err != nil {
			return err
		}
	}
	return nil
}

// snapshotAssets records the snapshot-controller operator commit the payloads name and the
// assets the payload lane read at that commit and translated.
func (r *runner) snapshotAssets(context.Context) error {
	res := r.result
	sc, err := r.lanes.commit.Wait()
	if err != nil {
		return err
	}
	for _, w := range sc.warnings {
		r.warn(w)
	}
	res.SnapshotCommit = sc.commit
	r.fetching = "snapshot assets " + redact.URL(r.opts.SnapshotAssets) + " at " + sc.commit
	if r.assets, err = r.lanes.assets.Wait(); err != nil {
		return err
	}
	r.snap, err = r.lanes.snap.Wait()
	return err
}

// translate records the bundle lane's translation of the CSV and manifests into the era's
// objects and image keys.
func (r *runner) translate(context.Context) error {
	res := r.result
	tr, err := r.lanes.tr.Wait()
	if err != nil {
		return err
	}
	r.translated = tr
	res.Excluded = tr.Excluded
	for _, w := range tr.Warnings {
		r.warn(w)
	}
	for _, img := range tr.Images {
		if img.Undeclared {
			res.UndeclaredImages = append(res.UndeclaredImages, img)
		}
	}
	return nil
}

// images takes per-arch digests for the bundle's relatedImages and the payloads' images
// and merges them into the tree's release JSONs.
func (r *runner) images(ctx context.Context) error {
	r.archImages = map[string]map[string]string{}
	for _, a := range r.arches {
		r.archImages[a] = map[string]string{}
	}
	if err := r.bundleImages(ctx); err != nil {
		return err
	}
	if err := r.payloadImages(); err != nil {
		return err
	}
	return r.mergeReleases()
}

// bundleImages resolves each relatedImage to its per-arch digests (resolve's, or a new
// lookup) and records them for the release JSONs and the lock file.
func (r *runner) bundleImages(ctx context.Context) error {
	resolved := map[string]*source.ImageDigests{}
	for i := range r.result.Resolution.RelatedImages {
		ri := &r.result.Resolution.RelatedImages[i]
		resolved[ri.Image] = ri
	}
	for _, img := range r.translated.Images {
		d := resolved[img.Ref]
		if d == nil {
			var err error
			r.fetching = img.Ref
			if d, err = r.src.ImageDigests(ctx, img.Ref, r.arches); err != nil {
				return fmt.Errorf("relatedImage %s (%s): %w", img.Name, img.Ref, err)
			}
		}
		repo := source.Repository(img.Ref)
		li := lock.ImageDigests{Key: img.Key, Name: img.Name, From: "bundle", Repository: repo,
			ListDigest: d.ListDigest, Arch: map[string]string{}}
		for _, a := range r.arches {
			dg, ok := d.For(a)
			if !ok {
				return fmt.Errorf("relatedImage %s (%s): no digest for %s", img.Name, img.Ref, a)
			}
			r.archImages[a][img.Key] = repo + "@" + dg
			li.Arch[a] = dg
		}
		r.lockImages = append(r.lockImages, li)
	}
	return nil
}

// payloadImages takes the era's payload images from each arch's image-references and
// records them for the release JSONs and (in the era's key order) the lock file.
func (r *runner) payloadImages() error {
	res := r.result
	byKey := map[string]*lock.ImageDigests{}
	for _, a := range r.arches {
		imgs, err := r.payloads[a].Images(r.era)
		if err != nil {
			return fmt.Errorf("payload %s: %w", payloadRef(res.Resolution, a), err)
		}
		for _, k := range r.era.PayloadImages {
			v, ok := imgs[k.Key]
			if !ok {
				return fmt.Errorf("payload %s: image-references has no tag %q", payloadRef(res.Resolution, a), k.Name)
			}
			r.archImages[a][k.Key] = v
			li := byKey[k.Key]
			if li == nil {
				li = &lock.ImageDigests{Key: k.Key, Name: k.Name, From: "payload", Repository: source.Repository(v), Arch: map[string]string{}}
				byKey[k.Key] = li
			}
			li.Arch[a] = v
		}
	}
	for _, k := range r.era.PayloadImages {
		if li := byKey[k.Key]; li != nil {
			r.lockImages = append(r.lockImages, *li)
		}
	}
	return nil
}

// mergeReleases merges each arch's images into the tree's release JSON.
func (r *runner) mergeReleases() error {
	res := r.result
	res.Images = r.archImages
	res.ReleaseChanges = map[string]*release.Change{}
	for _, a := range r.arches {
		rel := releasefile.RepoPath(a)
		merged, change, err := release.MergeWith(r.releaseData[a], r.era, r.archImages[a], r.mergeOptions(r.translated))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		r.files[rel] = merged
		res.ReleaseChanges[a] = change
	}
	return nil
}

// addLockAndRecipes adds the lock file and MicroShift's asset recipes to the files to write.
func (r *runner) addLockAndRecipes() error {
	recipes, err := r.records(r.files)
	if err != nil {
		return err
	}
	lk := r.buildLock(r.files, r.assets)
	r.newLock = lk
	data, err := lk.Marshal()
	if err != nil {
		return fmt.Errorf("encoding the lock file: %w", err)
	}
	r.files[lock.Path] = data
	// The recipes are MicroShift's files that other rebases edit too: written, not locked.
	for p, d := range recipes {
		r.files[p] = d
	}
	return nil
}

// mergeOptions adds the bundle's undeclared images to the release keys, and retires bundle
// keys the previous run wrote (per its lock) that this bundle no longer has.
func (r *runner) mergeOptions(tr *bundle.Result) release.MergeOptions {
	var o release.MergeOptions
	for _, img := range tr.Images {
		if img.Undeclared {
			o.Extra = append(o.Extra, img.Key)
		}
	}
	if old := r.result.old; old != nil {
		for _, li := range old.Images {
			if li.From == "bundle" {
				o.Retired = append(o.Retired, li.Key)
			}
		}
	}
	return o
}

// write writes the rendered files into the checkout (or, by mode, only plans, diffs or
// checks them against it).
func (r *runner) write(ctx context.Context) error {
	if r.opts.Mode == ModeCheck {
		return r.check()
	}
	return r.writeTree(ctx)
}

// check compares the tree and its lock file with what the lock's inputs rendered.
func (r *runner) check() error {
	res := r.result
	root := r.opts.MicroShiftDir
	// The lock is the input here; its tool version may legitimately differ.
	cmp := make(map[string][]byte, len(r.files))
	for k, v := range r.files {
		if k != lock.Path {
			cmp[k] = v
		}
	}
	changes, err := tree.Compute(root, cmp, r.managed)
	if err != nil {
		return err
	}
	res.Changes = changes
	// The lock itself is verified too: an edited hash, input or rule is drift, not "no changes".
	ruleDrift, err := recorded.PayloadRuleDrift(root, res.old)
	if err != nil {
		return err
	}
	lockDrift := append(res.old.CheckFiles(os.DirFS(root)), lock.Compare(res.old, r.newLock)...)
	lockDrift = append(lockDrift, ruleDrift...)
	res.LockDrift = lockDrift
	if !changes.Changed() && len(lockDrift) == 0 {
		return nil
	}
	res.Drift = true
	if res.Diff, err = tree.Diff(root, cmp, r.managed); err != nil {
		return err
	}
	parts := []string{}
	if changes.Changed() {
		parts = append(parts, changes.Summary())
	}
	if len(lockDrift) > 0 {
		parts = append(parts, "lock file "+lock.Path+": "+strings.Join(lockDrift, "; "))
	}
	return fmt.Errorf("%w: %s", ErrDrift, strings.Join(parts, "; "))
}

// writeTree computes the changes to the tree, then by mode diffs or writes it, writes the PR
// body and commits. A cancelled ctx (SIGINT, SIGTERM, --timeout) stops it before the swap with
// the tree untouched, or lets a started swap finish and stops right after it: the PR body and
// the commits would describe a run that was asked to stop.
func (r *runner) writeTree(ctx context.Context) error {
	res := r.result
	root, files, managed := r.opts.MicroShiftDir, r.files, r.managed
	changes, err := tree.Compute(root, files, managed)
	if err != nil {
		return err
	}
	res.Changes = changes
	if res.Semantic, res.Formatting, err = classify(root, changes, files); err != nil {
		return err
	}
	if err := r.review(); err != nil {
		return err
	}
	var before map[string][]byte
	if r.opts.PRBody != "" {
		if before, err = prbody.SnapshotBefore(root, changes); err != nil {
			return err
		}
	}
	if r.opts.Mode == ModeDiff {
		if res.Diff, err = tree.Diff(root, files, managed); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errors.New("stopped before the swap; the tree is untouched")
	}
	if r.opts.Mode == ModeWrite {
		if res.Changes, err = tree.WriteContext(ctx, root, files, managed); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return r.stoppedAfterSwap()
	}
	if r.opts.PRBody != "" {
		if err := r.writePRBody(changes, before, files); err != nil {
			return err
		}
	}
	if r.opts.Mode == ModeWrite && r.opts.Commit && res.Changes.Changed() {
		commits, err := commit.Phases(ctx, root, managed, r.recordPaths)
		res.Commits = commits
		if err != nil {
			return err
		}
	}
	return nil
}

// review records what the payload lane's review of the rendered tree found (reviewTree): RBAC
// escalations and new workloads are warnings of their own (stderr, summary, PR body), the RBAC
// review is also Result.RBAC.
func (r *runner) review() error {
	rv, err := r.lanes.review.Wait()
	if err != nil {
		return err
	}
	r.result.RBAC = &rv.rbac
	for _, e := range rv.rbac.Escalations {
		r.warn(fmt.Sprintf("security review: %s grants %s access: %s", e.Role, e.Class, e.Rule))
	}
	for _, w := range rv.workloads {
		r.warn(w)
	}
	return nil
}

// reviewed is what a reviewer must see of a rendered tree against the checkout's.
type reviewed struct {
	rbac      review.RBAC
	workloads []string
}

// reviewTree compares the objects t ships with the checkout's at root.
func reviewTree(root string, t *styled.Tree) (reviewed, error) {
	old, err := review.ReadTree(root, t.Managed)
	if err != nil {
		return reviewed{}, fmt.Errorf("reading the tree's objects: %w", err)
	}
	shipped, err := review.Decode(t.Files, t.Managed)
	if err != nil {
		return reviewed{}, err
	}
	rv, err := review.ReviewRBAC(old, shipped)
	if err != nil {
		return reviewed{}, err
	}
	return reviewed{rbac: rv, workloads: review.NewWorkloads(old, shipped)}, nil
}

// stoppedAfterSwap says what a run interrupted during its swap did: the swap completed (or
// there was none), nothing after it happened.
func (r *runner) stoppedAfterSwap() error {
	what := "the tree needed no change"
	if r.opts.Mode != ModeWrite {
		what = "the tree was not to be written"
	} else if c := r.result.Changes; c.Changed() {
		what = fmt.Sprintf("the swap into the tree had started and was completed (%d added, %d changed, %d removed)", len(c.Add), len(c.Change), len(c.Remove))
	}
	return fmt.Errorf("%s; stopped before the PR body and the commits", what)
}

// writePRBody writes the markdown body for --pr-body. It is written after the tree so a
// failed run leaves no body that describes changes which did not happen.
func (r *runner) writePRBody(changes *tree.Changes, before, files map[string][]byte) error {
	after := map[string][]byte{}
	for _, p := range append(append([]string{}, changes.Add...), changes.Change...) {
		after[p] = files[p]
	}
	res := r.result
	in := prbody.Input{Changes: changes, Before: before, After: after,
		NewVersion: res.BundleVersion, NewPayload: res.PayloadVersion,
		Undeclared: res.UndeclaredImages, Excluded: res.Excluded, Recipes: res.RecipeChanges,
		Semantic: res.Semantic, Formatting: res.Formatting,
		ImageUses: res.ImageUses, Arches: r.arches, RBAC: res.RBAC, Warnings: res.Warnings}
	// "before" is what the tree recorded (the lock, else its bundle record and release.base),
	// read as `lvms-rebase outdated` reads it, before the write.
	if rec := r.recorded; rec != nil {
		in.OldVersion, in.OldPayload = rec.Bundle, rec.Payload
	}
	if err := prbody.Write(r.opts.PRBody, in); err != nil {
		return fmt.Errorf("%s %s: %w", option.PRBody, r.opts.PRBody, err)
	}
	return nil
}

func (r *runner) buildLock(files map[string][]byte, assets *snapshot.Assets) *lock.Lock {
	res := r.result
	l := lock.New()
	l.ToolVersion = r.opts.ToolVersion
	l.OCP = r.opts.OCP
	l.Era = r.era.Name
	if c := res.LVMS; c != nil {
		l.LVMS = &lock.LVMS{Minor: c.Minor, Rule: c.Rule, Reason: c.Reason}
	}
	l.PayloadRule, l.PayloadSource = res.PayloadRule, res.PayloadSource
	l.PayloadVersion = res.PayloadVersion
	l.Bundle = lock.Image{
		Ref:     lock.Ref(res.Resolution.Bundle.Ref, res.Resolution.Bundle.Digest),
		Digest:  res.Resolution.Bundle.Digest,
		Version: res.Resolution.Bundle.Version,
	}
	// A URL source is recorded without credentials: the lock is committed and shared.
	src := r.opts.SnapshotAssets
	if strings.Contains(src, "://") {
		src = redact.Strip(src)
	}
	l.SnapshotAssets = lock.SnapshotAssets{Source: src, Commit: res.SnapshotCommit}
	if assets != nil {
		l.SnapshotAssets.SHA256 = assets.Digest()
		for _, d := range assets.Digests() {
			l.SnapshotAssets.Files = append(l.SnapshotAssets.Files, lock.File{Path: d.Path, SHA256: d.SHA256})
		}
	}
	for _, p := range res.Resolution.Payloads {
		l.Payloads = append(l.Payloads, lock.Payload{Arch: p.Arch, Ref: lock.Ref(p.Ref, p.Digest), Digest: p.Digest, Version: p.Version})
	}
	l.Images = r.lockImages
	l.SetFiles(files)
	return l
}

func readLock(root string) (*lock.Lock, error) {
	p := filepath.Join(root, filepath.FromSlash(lock.Path))
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	l, err := lock.Read(p)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// pinFromLock makes a run reproduce the lock's inputs: the bundle and payloads by digest
// (keeping their tags, which carry versions) and the snapshot-assets source.
func pinFromLock(o *Options, l *lock.Lock) error {
	if o.OCP == "" {
		o.OCP = l.OCP
	}
	if o.OCP != l.OCP {
		return fmt.Errorf("%s: %s %s differs from the lock file's ocp %s", option.Check, option.OCP, o.OCP, l.OCP)
	}
	if l.Bundle.Ref == "" || l.Bundle.Digest == "" {
		return fmt.Errorf("%s: lock file %s: bundle ref and digest are required", option.Check, lock.Path)
	}
	// The bundle is pinned, not its minor: the minor is the CSV's, and the lock's LVMS rule
	// is applied to it again (era.Locked), so an edited minor is drift, not a failed fetch.
	o.Source.BundleRef = l.Bundle.Ref + "@" + l.Bundle.Digest
	o.Source.ReleaseRefs = map[string]string{}
	var arches []string
	for _, p := range l.Payloads {
		if p.Ref == "" || p.Digest == "" {
			return fmt.Errorf("%s: lock file %s: payload %s: ref and digest are required", option.Check, lock.Path, p.Arch)
		}
		o.Source.ReleaseRefs[p.Arch] = p.Ref + "@" + p.Digest
		arches = append(arches, p.Arch)
	}
	// The lock lists payloads sorted by name; a run resolves (and reports) them in MicroShift's
	// order, as a run without --check does.
	slices.SortStableFunc(arches, arch.Compare)
	o.Source.Arches = arches
	if l.SnapshotAssets.Source != "" && o.SnapshotAssets == "" {
		o.SnapshotAssets = l.SnapshotAssets.Source
	}
	return nil
}

// countUnattributed adds to the fetch summary what the per-image stats do not hold: blobs
// resolve read for itself (tag checks, CSVs, release metadata, relatedImages) and the
// snapshot-assets downloads, so the summary counts every byte and blob the run fetched.
func (r *runner) countUnattributed() {
	total := r.src.Totals()
	for _, st := range r.result.Fetched {
		total.BytesFetched -= st.BytesFetched
		total.BlobsFetched -= st.BlobsFetched
		total.BlobsCached -= st.BlobsCached
	}
	if total.BytesFetched > 0 || total.BlobsFetched > 0 || total.BlobsCached > 0 {
		total.Image = "resolve and snapshot assets"
		r.result.Fetched = append(r.result.Fetched, total)
	}
}

// payloadRefs lists the payload references, for messages.
func payloadRefs(res *source.Resolution) string {
	var refs []string
	for _, p := range res.Payloads {
		refs = append(refs, p.Ref)
	}
	return strings.Join(refs, ", ")
}

func payloadRef(res *source.Resolution, arch string) string {
	for _, p := range res.Payloads {
		if p.Arch == arch {
			return p.Ref
		}
	}
	return arch
}

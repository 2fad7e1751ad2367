package rebase

import (
	"context"
	"fmt"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
)

// The snapshot steps at one commit: snapshot-assets (the files the era needs, read and
// translated), render (the snapshot overlay rendered and joined with the LVMS one, each file
// in the checkout's style) and review (the rendered tree against the checkout's). They are
// attempts (graph.Attempt): started at the commit the first arch's image-references names as
// soon as it has streamed in, before its payload layer verified, and used only once the
// verified payloads name the same commit; otherwise they are dropped and started again at the
// verified one.

// snapshotted are the snapshot files at one commit and their translation.
type snapshotted struct {
	assets *snapshot.Assets
	snap   *snapshot.Result
}

// reviewed is what a reviewer must see of a rendered tree against the checkout's.
type reviewed struct {
	rbac      review.RBAC
	workloads []string
}

// snapshotSteps are the outputs of the snapshot steps at one commit.
type snapshotSteps struct {
	assets *graph.Out[snapshotted]
	tree   *graph.Out[*styled.Tree]
	review *graph.Out[reviewed]
}

// attempts declares the snapshot steps at most once per commit, in the graph's attempt
// scope; declare declares them at a commit.
type attempts struct {
	mu      sync.Mutex
	at      map[string]*snapshotSteps
	declare func(commit string) *snapshotSteps
}

// start returns the snapshot steps at commit, declaring them the first time.
func (a *attempts) start(commit string) *snapshotSteps {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string]*snapshotSteps{}
	}
	st := a.at[commit]
	if st == nil {
		st = a.declare(commit)
		a.at[commit] = st
	}
	return st
}

// snapshotSteps declares the snapshot steps at commit in sc, on the bundle's resolution
// (the era) and its LVMS overlay.
func (r *run) snapshotSteps(sc graph.Scope, commit string, b *graph.Out[resolved], lvms *graph.Out[*styled.Part]) *snapshotSteps {
	assets := graph.Add1(sc, "snapshot-assets", b, func(ctx context.Context, s *graph.Step, b resolved) (snapshotted, error) {
		return r.snapshotAssets(ctx, s, b, commit)
	})
	tree := graph.Add3(sc, "render", b, lvms, assets, r.render)
	return &snapshotSteps{assets: assets, tree: tree, review: graph.Add1(sc, "review", tree, r.review)}
}

// snapshotAssets reads the files the era's translation needs at commit (one request per
// file, in parallel, for a per-file source; a whole archive, directory or tarball otherwise)
// and translates them.
func (r *run) snapshotAssets(ctx context.Context, s *graph.Step, b resolved, commit string) (snapshotted, error) {
	s.Fetch("snapshot assets " + redact.URL(r.opts.SnapshotAssets) + " at " + commit)
	paths, err := snapshot.Needed(b.era)
	if err != nil {
		return snapshotted{}, err
	}
	a, err := snapshot.LoadWith(ctx, snapshot.LoadOptions{
		Source:      r.opts.SnapshotAssets,
		Commit:      commit,
		Paths:       paths,
		Fetch:       r.src.FetchURL,
		Concurrency: r.src.Concurrency(),
	})
	if err != nil {
		return snapshotted{}, err
	}
	// With --check the lock is what is verified: lock.Compare reports a file that differs
	// from its recorded sha256 as drift, with the others.
	if old := r.old; old != nil && old.SnapshotAssets.Commit == commit && r.opts.Mode != ModeCheck {
		if err := verifySnapshotFiles(a, old.SnapshotAssets.Files); err != nil {
			return snapshotted{}, err
		}
	}
	snap, err := snapshot.Translate(a, b.era)
	return snapshotted{assets: a, snap: snap}, err
}

// verifySnapshotFiles checks files read at the lock's commit against the sha256 the lock
// recorded: a file at a commit never changes, so a difference is a wrong mirror, source
// or cache, not an upstream update.
func verifySnapshotFiles(a *snapshot.Assets, recorded []lock.File) error {
	want := map[string]string{}
	for _, f := range recorded {
		want[f.Path] = f.SHA256
	}
	for _, d := range a.Digests() {
		if w, ok := want[d.Path]; ok && w != d.SHA256 {
			return fmt.Errorf("snapshot assets %s (commit %s): %s has sha256 %s, the lock file %s records %s for this commit (wrong mirror, source or cache?)",
				a.Source, a.Commit, d.Path, d.SHA256, lock.Path, w)
		}
	}
	return nil
}

// render renders the era's snapshot overlay for the translated assets and joins it with the
// LVMS overlay: the files to write, each in the checkout's style, and the directories the run
// manages.
func (r *run) render(_ context.Context, _ *graph.Step, b resolved, lvms *styled.Part, sn snapshotted) (*styled.Tree, error) {
	return styled.Render(r.opts.MicroShiftDir, b.era, r.opts.Kustomize, lvms, sn.snap, sn.assets)
}

// review compares the objects the tree ships with the checkout's: RBAC escalations and new
// workloads are warnings of their own (stderr, summary, PR body), the RBAC review is also
// Result.RBAC.
func (r *run) review(_ context.Context, s *graph.Step, t *styled.Tree) (reviewed, error) {
	old, err := review.ReadTree(r.opts.MicroShiftDir, t.Managed)
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
	for _, e := range rv.Escalations {
		s.Warn(e.Warning())
	}
	out := reviewed{rbac: rv, workloads: review.NewWorkloads(old, shipped)}
	for _, w := range out.workloads {
		s.Warn(w)
	}
	return out, nil
}

package rebase

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/internal/future"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
)

// A cold run's wall time is set by the network: round trips that depend on each other and
// the payloads' top layers over the link. So the fetches, and the work that needs only
// their results, run ahead of the phases in two lanes, both started by resolve:
//
//	bundle lane:  LVMS choice → bundle resolved and parsed (tags, manifest, blobs,
//	              relatedImages) → era → translated → LVMS overlay rendered and styled
//	payload lane: payloads resolved and parsed (tags, manifests, config and top layers) →
//	              snapshot commit → snapshot files (once the era is known) → translated →
//	              tree rendered and styled → reviewed against the checkout
//
// The payload lane lists the release tags while the bundle lane lists the bundle's, and the
// bundle is translated and its overlay rendered while the payloads' layers download. The
// snapshot steps start before the payloads are verified, at the commit the first arch's
// image-references names as it streams in (speculation.go). The phases still run in their
// order, each waiting for its step of a lane and recording it (warnings, fetch stats,
// errors) as it did when it did the work itself: the result, the order of its warnings and
// the error reported do not depend on which lane finished first. A lane stops at its first
// error (its later steps report future.ErrStopped); a failed phase cancels both lanes, and
// the run waits for them before it returns.

// bundleResolved is the bundle lane's first step: the LVMS choice and the bundle half of
// the resolution.
type bundleResolved struct {
	choice era.Choice
	res    *source.Resolution
}

// eraChosen is the choice completed from the bundle's CSV (and, with --check, the lock's
// rule) and the era it gives.
type eraChosen struct {
	choice era.Choice
	era    era.Era
}

// snapshotCommit is the snapshot-controller operator commit the payloads name, with a
// warning when they disagree.
type snapshotCommit struct {
	commit   string
	warnings []string
}

// lanes are the steps the phases wait for.
type lanes struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	resolved *future.Value[bundleResolved]
	era      *future.Value[eraChosen]
	tr       *future.Value[*bundle.Result]
	lvms     *future.Value[*styled.Part]

	payloadsResolved *future.Value[*source.Resolution]
	commit           *future.Value[snapshotCommit]
	// snapshotSteps are the steps at the verified commit: the payload lane's own, or a
	// speculation's it took over.
	snapshotSteps
}

// startLanes starts both lanes under a context the run cancels when it stops.
func (r *runner) startLanes(ctx context.Context) *lanes {
	ctx, cancel := context.WithCancel(ctx)
	l := &lanes{
		cancel:           cancel,
		resolved:         future.New[bundleResolved](),
		era:              future.New[eraChosen](),
		tr:               future.New[*bundle.Result](),
		lvms:             future.New[*styled.Part](),
		payloadsResolved: future.New[*source.Resolution](),
		commit:           future.New[snapshotCommit](),
		snapshotSteps:    newSnapshotSteps(),
	}
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		r.bundleLane(ctx, l)
	}()
	go func() {
		defer l.wg.Done()
		r.payloadLane(ctx, l)
	}()
	return l
}

// stop cancels the lanes and waits for them; a run returns only after its lanes ended.
func (l *lanes) stop() {
	if l == nil {
		return
	}
	l.cancel()
	l.wg.Wait()
}

// bundleLane chooses the LVMS minor, resolves the bundle, translates it and renders its
// overlay.
func (r *runner) bundleLane(ctx context.Context, l *lanes) {
	var err error
	defer func() { future.StopAfter(err, l.resolved, l.era, l.tr, l.lvms) }()
	var b bundleResolved
	if b.choice, err = r.src.ChooseLVMS(ctx, r.opts.OCP, r.opts.LVMS); err != nil {
		l.resolved.Fail(err)
		return
	}
	// The bundle comes back parsed (Resolution.Content) for the fetch phases.
	if b.res, err = r.src.ResolveBundle(ctx, r.opts.OCP, b.choice.Minor); err != nil {
		l.resolved.Fail(err)
		return
	}
	l.resolved.Set(b, nil)
	var e eraChosen
	if e, err = r.chooseEra(b); err != nil {
		l.era.Fail(err)
		return
	}
	l.era.Set(e, nil)
	var tr *bundle.Result
	if tr, err = translateBundle(b.res, e.era); err != nil {
		l.tr.Fail(err)
		return
	}
	l.tr.Set(tr, nil)
	l.lvms.Set(styled.LVMS(r.opts.MicroShiftDir, e.era, r.opts.Kustomize, tr.Objects))
}

// chooseEra completes the LVMS choice from the bundle's CSV when the bundle was pinned,
// applies the lock's rule again with --check, and combines the eras of both minors.
func (r *runner) chooseEra(b bundleResolved) (eraChosen, error) {
	c := b.choice
	if c.Minor == "" {
		m, err := era.MinorOf(b.res.Bundle.CSVVersion)
		if err != nil {
			return eraChosen{}, fmt.Errorf("bundle %s: CSV spec.version: %w", b.res.Bundle.Ref, err)
		}
		c.Minor = m
	}
	if old := r.result.old; r.opts.Mode == ModeCheck && old != nil && old.LVMS != nil {
		// --check pins the bundle, not the minor: the recorded rule is applied again to it.
		c = era.Locked(r.opts.OCP, old.LVMS.Rule, old.LVMS.Reason, c.Minor)
	}
	e, err := era.Combine(r.opts.OCP, c.Minor)
	return eraChosen{choice: c, era: e}, err
}

// translateBundle turns the bundle's CSV and manifests into the era's objects and image keys.
func translateBundle(res *source.Resolution, e era.Era) (*bundle.Result, error) {
	c, err := resolvedContent(res)
	if err != nil {
		return nil, err
	}
	tr, err := bundle.Translate(c.Bundle, e, bundle.Options{VersionTag: res.Bundle.Version})
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", res.Bundle.Ref, err)
	}
	return tr, nil
}

// payloadLane resolves the payloads, then reads and translates the snapshot assets at the
// commit they name and renders the tree with them. The snapshot files are requested as soon
// as the first arch's image-references has streamed in (speculation.go), and what they give
// is used once the verified payloads name the same commit.
func (r *runner) payloadLane(ctx context.Context, l *lanes) {
	var err error
	defer func() { future.StopAfter(err, l.payloadsResolved, l.commit, l.assets, l.snap, l.tree, l.review) }()
	spec := &speculation{}
	var res *source.Resolution
	if res, err = r.src.ResolvePayloadsEarly(ctx, r.opts.OCP, spec.early(ctx, r, l)); err != nil {
		l.payloadsResolved.Fail(err)
		return
	}
	l.payloadsResolved.Set(res, nil)
	var sc snapshotCommit
	if sc, err = commitOf(res); err != nil {
		l.commit.Fail(err)
		return
	}
	l.commit.Set(sc, nil)
	if st := spec.at(sc.commit); st != nil {
		l.takeOver(st)
		return
	}
	r.snapshotSteps(ctx, l, sc.commit, l.snapshotSteps)
}

// snapshotSteps are what the snapshot files at one commit give: the files, their
// translation, and the tree rendered with them and the LVMS overlay (the render phase's
// work, done ahead of it).
type snapshotSteps struct {
	assets *future.Value[*snapshot.Assets]
	snap   *future.Value[*snapshot.Result]
	tree   *future.Value[*styled.Tree]
	review *future.Value[reviewed]
}

func newSnapshotSteps() snapshotSteps {
	return snapshotSteps{assets: future.New[*snapshot.Assets](), snap: future.New[*snapshot.Result](), tree: future.New[*styled.Tree](),
		review: future.New[reviewed]()}
}

// takeOver gives s the outcomes of from, step by step.
func (s snapshotSteps) takeOver(from *snapshotSteps) {
	s.assets.Set(from.assets.Wait())
	s.snap.Set(from.snap.Wait())
	s.tree.Set(from.tree.Wait())
	s.review.Set(from.review.Wait())
}

// snapshotSteps reads the snapshot files at commit (once the era, which says which files, is
// known), translates them, renders the tree and reviews it, setting each step; a failed step
// stops the later ones.
func (r *runner) snapshotSteps(ctx context.Context, l *lanes, commit string, st snapshotSteps) {
	var err error
	defer func() { future.StopAfter(err, st.assets, st.snap, st.tree, st.review) }()
	var ec eraChosen
	if ec, err = l.era.Wait(); err != nil {
		return
	}
	e := ec.era
	var a *snapshot.Assets
	if a, err = r.loadSnapshotAssets(ctx, e, commit); err != nil {
		st.assets.Fail(err)
		return
	}
	st.assets.Set(a, nil)
	var snap *snapshot.Result
	if snap, err = snapshot.Translate(a, e); err != nil {
		st.snap.Fail(err)
		return
	}
	st.snap.Set(snap, nil)
	var lvms *styled.Part
	if lvms, err = l.lvms.Wait(); err != nil {
		st.tree.Fail(err)
		return
	}
	var t *styled.Tree
	if t, err = styled.Render(r.opts.MicroShiftDir, e, r.opts.Kustomize, lvms, snap, a); err != nil {
		st.tree.Fail(err)
		return
	}
	st.tree.Set(t, nil)
	st.review.Set(reviewTree(r.opts.MicroShiftDir, t))
}

// commitOf is the snapshot-controller operator commit of the first payload, with a warning
// for each other payload that names another.
func commitOf(res *source.Resolution) (snapshotCommit, error) {
	refs := res.Payloads
	if res.Content == nil || len(refs) == 0 || res.Content.Payloads[refs[0].Arch] == nil {
		return snapshotCommit{}, errors.New("the resolution holds no payload content (it did not come from source.Resolve)")
	}
	commit, err := res.Content.Payloads[refs[0].Arch].SnapshotOperatorCommit()
	if err != nil {
		return snapshotCommit{}, fmt.Errorf("payload %s: %w", refs[0].Ref, err)
	}
	sc := snapshotCommit{commit: commit}
	for _, p := range refs[1:] {
		loaded := res.Content.Payloads[p.Arch]
		if loaded == nil {
			continue // fetch-payloads names it
		}
		if c, err := loaded.SnapshotOperatorCommit(); err == nil && c != commit {
			sc.warnings = append(sc.warnings, fmt.Sprintf("payloads disagree on the %s commit: %s has %s, %s has %s; using %s",
				payload.SnapshotOperatorTag, refs[0].Arch, commit, p.Arch, c, commit))
		}
	}
	return sc, nil
}

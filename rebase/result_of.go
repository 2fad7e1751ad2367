package rebase

import (
	"errors"
	"slices"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
)

// outs are the outputs of the run's steps.
type outs struct {
	resolve  *graph.Out[resolved]
	payloads *graph.Out[fetched]
	tr       *graph.Out[*bundle.Result]
	lvms     *graph.Out[*styled.Part]
	assets   *graph.Out[snapshotted]
	tree     *graph.Out[*styled.Tree]
	images   *graph.Out[imaged]
	// verifyBundle and verifyPayloads check signatures as soon as the digests are known;
	// provenance waits for them and records every digest the run writes (verify.go).
	verifyBundle, verifyPayloads *graph.Out[struct{}]
	provenance                   *graph.Out[proven]
	records                      *graph.Out[recordsOut]
	review                       *graph.Out[reviewed]
	write                        *graph.Out[written]
}

// result is base filled in from the outputs of the steps that succeeded, the steps that ran
// (Phases, in the declared order, with the time each worked) and the warnings: base's (the
// recovery's), every step's in the declared order, then those the source logged as it worked
// (retries) that no step recorded. Nothing in it depends on which step finished first. Before
// the write step has ended (final false, for the PR body) it leaves the write's part out.
func (r *run) result(g *graph.Graph, o outs, base *Result, final bool) *Result {
	res := *base
	res.Warnings = slices.Clone(base.Warnings)
	b, errB := o.resolve.Wait()
	p, errP := o.payloads.Wait()
	res.LockDrift = append(slices.Clone(b.lockDrift), p.lockDrift...)
	res.Drift = len(res.LockDrift) > 0
	if b.res != nil && b.res.Content != nil {
		res.BundleVersion = b.res.Bundle.Version
		res.Fetched = append(res.Fetched, b.res.Content.BundleStats)
	}
	if p.res != nil && p.res.Content != nil && errP == nil {
		res.PayloadVersion, res.SnapshotCommit = p.version, p.commit
		for _, pl := range p.res.Payloads {
			res.Fetched = append(res.Fetched, p.res.Content.PayloadStats[pl.Arch])
		}
	}
	if errB == nil && errP == nil {
		res.Resolution = r.joined(b, p)
		res.PayloadRule, res.LVMS = res.Resolution.PayloadRule, res.Resolution.LVMS
		res.Era, res.OCPEra = b.era.Name, b.era.OCPEra
	}
	if tr, err := o.tr.Wait(); err == nil {
		res.Excluded = tr.Excluded
		for _, img := range tr.Images {
			if img.Undeclared {
				res.UndeclaredImages = append(res.UndeclaredImages, img)
			}
		}
	}
	if _, err := o.assets.Wait(); err == nil && final {
		res.Fetched = r.countUnattributed(res.Fetched)
	}
	r.resultOfFiles(o, &res, final)
	for _, s := range g.Steps() {
		res.Phases = append(res.Phases, Phase{Name: s.Name(), Duration: s.Took().Round(time.Microsecond)})
		res.Warnings = append(res.Warnings, s.Warnings()...)
	}
	res.Warnings = append(res.Warnings, r.warned.all()...)
	res.Warnings = once(res.Warnings)
	return &res
}

// resultOfFiles fills in what the steps from images on give.
func (r *run) resultOfFiles(o outs, res *Result, final bool) {
	if t, err := o.tree.Wait(); err == nil {
		res.ImageUses = t.Images
	}
	if im, err := o.images.Wait(); err == nil {
		res.Images, res.ReleaseChanges = im.byArch, im.changes
	}
	if pv, err := o.provenance.Wait(); err == nil {
		res.Provenance = pv.report
	}
	if rec, err := o.records.Wait(); err == nil {
		res.RecipeChanges, res.Retired = rec.recipeChanges, rec.retired
	}
	if rv, err := o.review.Wait(); err == nil {
		res.RBAC = &rv.rbac
	}
	if !final {
		return
	}
	w, err := o.write.Wait()
	if err != nil && !errors.Is(err, ErrDrift) && w.changes == nil {
		return
	}
	res.Changes, res.Semantic, res.Formatting, res.Diff, res.Commits = w.changes, w.semantic, w.formatting, w.diff, w.commits
	res.Uncommitted = w.uncommitted
	res.Drift = res.Drift || w.drift
	res.LockDrift = append(res.LockDrift, w.lockDrift...)
}

// countUnattributed adds to the fetch summary what the per-image stats do not hold: blobs
// resolution read for itself (tag checks, CSVs, release metadata, relatedImages) and the
// snapshot-assets downloads, so the summary counts every byte and blob the run fetched.
func (r *run) countUnattributed(fetched []source.FetchStats) []source.FetchStats {
	total := r.src.Totals()
	for _, st := range fetched {
		total.BytesFetched -= st.BytesFetched
		total.BlobsFetched -= st.BlobsFetched
		total.BlobsCached -= st.BlobsCached
	}
	if total.BytesFetched > 0 || total.BlobsFetched > 0 || total.BlobsCached > 0 {
		total.Image = "resolve and snapshot assets"
		fetched = append(fetched, total)
	}
	return fetched
}

// once keeps the first of equal warnings: a step may warn about what the source also logged
// (the lagging LVMS minor), and a reader needs each warning once.
func once(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

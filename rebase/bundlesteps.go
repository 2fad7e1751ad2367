package rebase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
)

// The bundle's steps: resolve (the LVMS minor, the bundle, the era), translate, render-lvms.

// resolved is the resolve step's output: the LVMS choice, the bundle half of the resolution
// (the bundle parsed, every relatedImage's digests) and the era of both minors. With --check,
// lockDrift is set when the lock's own pins are the cause of a failure.
type resolved struct {
	choice    era.Choice
	res       *source.Resolution
	era       era.Era
	lockDrift []string
}

// resolve chooses the LVMS minor, resolves the bundle (its tags, manifest, layers and
// relatedImages) and combines the era of the OpenShift minor with that of the LVMS minor the
// bundle is.
func (r *run) resolve(ctx context.Context, s *graph.Step) (resolved, error) {
	s.Fetch("the newest inputs for OpenShift " + r.opts.OCP)
	var b resolved
	var err error
	if b.choice, err = r.src.ChooseLVMS(ctx, r.opts.OCP, r.opts.LVMS); err != nil {
		return b, err
	}
	if b.res, err = r.src.ResolveBundle(ctx, r.opts.OCP, b.choice.Minor); err != nil {
		b.lockDrift, err = r.pinsDisagree(err)
		return b, err
	}
	if b.choice, err = r.completeChoice(b.choice, b.res); err != nil {
		return b, err
	}
	if b.choice.Warning != "" && !r.lockRecords(b.choice) {
		s.Warn(b.choice.Warning)
	}
	// The source logged these as it found them.
	for _, w := range b.res.Warnings {
		s.Record(w)
	}
	b.era, err = era.Combine(r.opts.OCP, b.choice.Minor)
	return b, err
}

// lockRecords reports whether the tree's lock already records choice for this OpenShift
// minor. A lagging LVMS minor is a warning on the run that chooses it; once the lock records
// it, it is a fact the era's policy declares, said by the summary's lvms line (and -o json's
// lvms), not again as a warning on every run that changes nothing.
func (r *run) lockRecords(c era.Choice) bool {
	old := r.old
	return old != nil && old.LVMS != nil && old.OCP == r.opts.OCP && old.LVMS.Minor == c.Minor && old.LVMS.Rule == c.Rule
}

// completeChoice completes the LVMS choice from the bundle's CSV when the bundle was pinned,
// and with --check applies the lock's rule again to it.
func (r *run) completeChoice(c era.Choice, res *source.Resolution) (era.Choice, error) {
	if c.Minor == "" {
		m, err := era.MinorOf(res.Bundle.CSVVersion)
		if err != nil {
			return c, fmt.Errorf("bundle %s: CSV spec.version: %w", res.Bundle.Ref, err)
		}
		c.Minor = m
	}
	if old := r.old; r.opts.Mode == ModeCheck && old != nil && old.LVMS != nil {
		// --check pins the bundle, not the minor: the recorded rule is applied again to it.
		c = era.Locked(r.opts.OCP, old.LVMS.Rule, old.LVMS.Reason, c.Minor)
	}
	return c, nil
}

// translate turns the bundle's CSV and manifests into the era's objects and image keys.
func (r *run) translate(ctx context.Context, s *graph.Step, b resolved) (*bundle.Result, error) {
	c := b.res.Content
	if c == nil || c.Bundle == nil {
		return nil, errors.New("the resolution holds no bundle content (it did not come from source.Resolve)")
	}
	tr, err := bundle.Translate(c.Bundle, b.era, bundle.Options{VersionTag: b.res.Bundle.Version})
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.res.Bundle.Ref, err)
	}
	for _, w := range tr.Warnings {
		s.Warn(w)
	}
	for _, n := range tr.Notes {
		r.log.Log(ctx, slog.Level(-1), n)
	}
	return tr, nil
}

// renderLVMS renders the era's LVMS overlay on its own, each file in the checkout's style:
// it needs only the bundle, so it runs while the payloads download.
func (r *run) renderLVMS(_ context.Context, _ *graph.Step, b resolved, tr *bundle.Result) (*styled.Part, error) {
	return styled.LVMS(r.opts.MicroShiftDir, b.era, r.opts.Kustomize, tr.Objects)
}

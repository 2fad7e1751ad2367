// Package rebase runs the job behind `lvms-rebase --ocp X.Y`: resolve the LVMS bundle and
// the OCP payloads, fetch what is needed, translate the CSV and the snapshot-controller
// assets, take per-arch image digests into the release JSONs, render the era's kustomize
// overlays and write the result, with a lock file, into a MicroShift checkout — atomically.
//
// A run is one graph of named steps (internal/graph), declared in one place (steps): each
// step is a function of the outputs of the steps it names, and runs as soon as they are ready.
// Every step works in memory; the checkout is touched only by the last, write, whose
// tree.Write either replaces all files or leaves the tree byte-identical.
package rebase

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

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
	unlock, err := tree.Lock(root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkOutputs(root, opts); err != nil {
		return nil, err
	}
	r := &run{opts: opts, log: logger(opts.Logger)}
	res := &Result{Mode: opts.Mode}
	res.Recovered, err = r.recoverTree()
	for _, rec := range res.Recovered {
		res.Warnings = append(res.Warnings, rec.String())
	}
	if err != nil {
		return res, err
	}
	if err := r.settle(ctx, res); err != nil {
		return nil, err
	}
	return res, r.steps(ctx, res)
}

// settle fixes everything the steps read before any network access: the lock found in the
// tree, the OpenShift minor and the payload rule (with --check, the lock's pins), the image
// source, and the local checks of preflight.
func (r *run) settle(ctx context.Context, res *Result) error {
	root := r.opts.MicroShiftDir
	old, err := readLock(root)
	if err != nil {
		return err
	}
	r.old, res.old = old, old
	if r.opts.PRBody != "" {
		// An unreadable record leaves the PR body's "before" column empty; the run itself
		// reports the unreadable file (preflight reads the release JSONs).
		r.recorded, _ = recorded.Read(safefile.FS(root))
	}
	if err := r.prepare(); err != nil {
		return err
	}
	if r.opts.SnapshotAssets == "" {
		r.opts.SnapshotAssets = snapshot.DefaultSource
	}
	if _, err := era.ParseMinor(r.opts.OCP); err != nil {
		return fmt.Errorf("%s %w", option.OCP, err)
	}
	if _, err := era.OCPRowFor(r.opts.OCP); err != nil {
		return err
	}
	res.OCP, res.PayloadRule, res.PayloadSource = r.opts.OCP, r.payloadRule, r.payloadSource
	r.opts.Source.Logger = r.sourceLogger(r.opts.Source.Logger)
	early := &earlyPayloads{}
	r.opts.Source.OnPayloadDigest = early.heard
	if r.src, err = source.New(r.opts.Source); err != nil {
		return err
	}
	r.arches = r.src.Arches()
	if err := r.preflight(ctx); err != nil {
		return err
	}
	r.verification, err = newVerification(r.opts, r.src, r.old)
	early.set(r.verification)
	return err
}

// prepare settles the inputs before any network access: with --check the lock's pins;
// otherwise the OpenShift minor (given or the tree's) and the payload rule.
func (r *run) prepare() error {
	if r.opts.Mode == ModeCheck {
		if r.old == nil {
			return fmt.Errorf("%s: no lock file %s in %s; run a rebase first", option.Check, lock.Path, r.opts.MicroShiftDir)
		}
		r.payloadRule, r.payloadSource = r.old.PayloadRule, r.old.PayloadSource
		return pinFromLock(&r.opts, r.old)
	}
	var err error
	if r.opts.OCP, err = chooseOCP(r.opts.OCP, r.opts.MicroShiftDir, r.opts.AllowBaseMismatch); err != nil {
		return err
	}
	r.payloadRule, r.payloadSource, err = choosePayloads(&r.opts)
	return err
}

// recoverTree repairs a write that an earlier, killed run left half done, and says so: the
// tree is then either as before that run or as it wrote it, never a mix (files changed since
// are left alone and reported). A run in a read-only mode only reports what is pending; it
// stops when a journaled write is, and goes on past a mere staging (the tree is untouched).
func (r *run) recoverTree() ([]tree.Recovery, error) {
	recover := tree.Recover
	if r.opts.Mode != ModeWrite {
		recover = tree.Pending
	}
	recs, err := recover(r.opts.MicroShiftDir, treeScope())
	if err == nil && r.opts.Mode != ModeWrite {
		var pending []string
		for _, rec := range recs {
			if rec.Interrupted() {
				pending = append(pending, rec.String())
			}
		}
		if len(pending) > 0 {
			err = fmt.Errorf("%w (mode %s modifies nothing; a write run repairs it first): %s", ErrPendingRecovery, r.opts.Mode, strings.Join(pending, "; "))
		}
	}
	for _, rec := range recs {
		r.log.Warn(rec.String(), "dir", rec.Dir, "action", rec.Action)
	}
	return recs, err
}

// steps declares the run's steps, in the order they are reported, runs them and fills res.
// The fetches start at once: the bundle's resolution and the payloads' overlap, the bundle is
// translated and its overlay rendered while the payloads' layers download, and the snapshot
// steps start at the commit the first payload's image-references names as it streams in
// (snapshotsteps.go).
func (r *run) steps(ctx context.Context, res *Result) error {
	g := graph.New(ctx, r.hooks())
	var o outs
	var snap attempts
	o.resolve = graph.Add0(g, "resolve", r.resolve)
	o.payloads = graph.Add0(g, "fetch-payloads", func(ctx context.Context, s *graph.Step) (fetched, error) {
		return r.fetchPayloads(ctx, s, func(commit string) { snap.start(commit) })
	})
	o.verifyBundle = graph.Add1(g, "verify-bundle", o.resolve, r.verifyBundle)
	o.verifyPayloads = graph.Add1(g, "verify-payloads", o.payloads, r.verifyPayloads)
	o.tr = graph.Add1(g, "translate", o.resolve, r.translate)
	o.lvms = graph.Add2(g, "render-lvms", o.resolve, o.tr, r.renderLVMS)
	o.assets = graph.Pick(g, o.payloads, func(p fetched) *graph.Out[snapshotted] { return snap.start(p.commit).assets })
	snap.declare = func(commit string) *snapshotSteps {
		return r.snapshotSteps(g.Attempt(o.assets.Pos()), commit, o.resolve, o.lvms)
	}
	o.tree = graph.Pick(g, o.payloads, func(p fetched) *graph.Out[*styled.Tree] { return snap.start(p.commit).tree })
	o.images = graph.Add3(g, "images", o.resolve, o.payloads, o.tr, r.images)
	o.provenance = graph.Add5(g, "provenance", o.resolve, o.payloads, o.images, o.verifyBundle, o.verifyPayloads, r.provenance)
	o.records = graph.Add5(g, "records", o.resolve, o.payloads, o.provenance, o.tree, o.assets, r.records)
	o.review = graph.Pick(g, o.payloads, func(p fetched) *graph.Out[reviewed] { return snap.start(p.commit).review })
	o.write = graph.Add2(g, "write", o.records, o.review, func(ctx context.Context, s *graph.Step, rec recordsOut, _ reviewed) (written, error) {
		return r.write(ctx, s, rec, func() *Result { return r.result(g, o, res, false) })
	})
	step, err := g.Run()
	r.verification.stop()
	*res = *r.result(g, o, res, true)
	if err != nil && ctx.Err() != nil && step != nil {
		what := ""
		if f := step.Fetching(); f != "" {
			what = " while fetching " + f
		}
		err = fmt.Errorf("%v in phase %s%s: %w", context.Cause(ctx), step.Name(), what, err)
	}
	return err
}

package rebase

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/keepstyle"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/prbody"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// written is the write step's output: what the run changes in the tree (or, by mode, would
// change, or differs from the lock), and the commits it made.
type written struct {
	changes    *tree.Changes
	semantic   []string
	formatting []string
	diff       string
	commits    []string
	// uncommitted are the files the run writes that differ from HEAD (runs without --commit).
	uncommitted []string
	drift       bool
	lockDrift   []string
}

// write writes the files into the checkout (or, by mode, only plans, diffs or checks them
// against it). summary is the result of the steps before it, for the PR body.
func (r *run) write(ctx context.Context, s *graph.Step, rec recordsOut, summary func() *Result) (written, error) {
	if r.opts.Mode == ModeCheck {
		return r.check(rec)
	}
	return r.writeTree(ctx, s, rec, summary)
}

// check compares the tree and its lock file with what the lock's inputs rendered.
func (r *run) check(rec recordsOut) (written, error) {
	root := r.opts.MicroShiftDir
	// The lock is the input here; its tool version may legitimately differ.
	cmp := make(map[string][]byte, len(rec.files))
	for k, v := range rec.files {
		if k != lock.Path {
			cmp[k] = v
		}
	}
	var w written
	changes, err := tree.Compute(root, cmp, rec.managed)
	if err != nil {
		return w, err
	}
	w.changes = changes
	// The lock itself is verified too: an edited hash, input or rule is drift, not "no changes".
	ruleDrift, err := recorded.PayloadRuleDrift(root, r.old)
	if err != nil {
		return w, err
	}
	w.lockDrift = append(r.old.CheckFiles(safefile.FS(root)), lock.Compare(r.old, rec.lock)...)
	w.lockDrift = append(w.lockDrift, ruleDrift...)
	if !changes.Changed() && len(w.lockDrift) == 0 {
		return w, nil
	}
	w.drift = true
	if w.diff, err = tree.Diff(root, cmp, rec.managed); err != nil {
		return w, err
	}
	parts := []string{}
	if changes.Changed() {
		parts = append(parts, changes.Summary())
	}
	if len(w.lockDrift) > 0 {
		parts = append(parts, "lock file "+lock.Path+": "+strings.Join(w.lockDrift, "; "))
	}
	return w, fmt.Errorf("%w: %s", ErrDrift, strings.Join(parts, "; "))
}

// writeTree computes the changes to the tree, then by mode diffs or writes it, writes the PR
// body and commits. A cancelled ctx (SIGINT, SIGTERM, --timeout) stops it before the swap with
// the tree untouched, or lets a started swap finish and stops right after it: the PR body and
// the commits would describe a run that was asked to stop.
func (r *run) writeTree(ctx context.Context, s *graph.Step, rec recordsOut, summary func() *Result) (written, error) {
	root, files, managed := r.opts.MicroShiftDir, rec.files, rec.managed
	var w written
	if err := treeScope().Covers(files, managed); err != nil {
		return w, err
	}
	var err error
	if w.changes, err = tree.Compute(root, files, managed); err != nil {
		return w, err
	}
	if w.semantic, w.formatting, err = classify(root, w.changes, files); err != nil {
		return w, err
	}
	var before map[string][]byte
	if r.opts.PRBody != "" {
		if before, err = prbody.SnapshotBefore(root, w.changes); err != nil {
			return w, err
		}
	}
	if r.opts.Mode == ModeDiff {
		if w.diff, err = tree.Diff(root, files, managed); err != nil {
			return w, err
		}
	}
	if ctx.Err() != nil {
		return w, errors.New("stopped before the swap; the tree is untouched")
	}
	planned := w.changes
	if r.opts.Mode == ModeWrite {
		if w.changes, err = tree.WriteContext(ctx, root, files, managed); err != nil {
			return w, err
		}
	}
	if ctx.Err() != nil {
		return w, r.stoppedAfterSwap(w.changes)
	}
	if w.uncommitted, err = r.reportUncommitted(ctx, s, w.changes); err != nil {
		return w, err
	}
	if r.opts.PRBody != "" {
		if err := r.writePRBody(summary(), w, planned, before, files); err != nil {
			return w, err
		}
	}
	w.commits, err = r.commit(ctx, rec, w.changes)
	return w, err
}

// stoppedAfterSwap says what a run interrupted during its swap did: the swap completed (or
// there was none), nothing after it happened.
func (r *run) stoppedAfterSwap(c *tree.Changes) error {
	what := "the tree needed no change"
	if r.opts.Mode != ModeWrite {
		what = "the tree was not to be written"
	} else if c.Changed() {
		what = fmt.Sprintf("the swap into the tree had started and was completed (%d added, %d changed, %d removed)", len(c.Add), len(c.Change), len(c.Remove))
	}
	return fmt.Errorf("%s; stopped before the PR body and the commits", what)
}

// writePRBody writes the markdown body for --pr-body. It is written after the tree so a
// failed run leaves no body that describes changes which did not happen.
func (r *run) writePRBody(res *Result, w written, changes *tree.Changes, before, files map[string][]byte) error {
	after := map[string][]byte{}
	for _, p := range append(append([]string{}, changes.Add...), changes.Change...) {
		after[p] = files[p]
	}
	in := prbody.Input{Changes: changes, Before: before, After: after,
		NewVersion: res.BundleVersion, NewPayload: res.PayloadVersion,
		Undeclared: res.UndeclaredImages, Excluded: res.Excluded, Recipes: res.RecipeChanges,
		Semantic: w.semantic, Formatting: w.formatting,
		ImageUses: res.ImageUses, Arches: r.arches, RBAC: res.RBAC, Warnings: res.Warnings, Provenance: res.Provenance, Uncommitted: w.uncommitted}
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

// classify splits the changed files into changes of meaning and changes of
// formatting only (same documents once decoded).
func classify(root string, changes *tree.Changes, files map[string][]byte) (semantic, formatting []string, err error) {
	for _, p := range changes.Change {
		cur, err := safefile.ReadIn(root, p, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if isData(p) && keepstyle.Equal(cur, files[p]) {
			formatting = append(formatting, p)
		} else {
			semantic = append(semantic, p)
		}
	}
	return semantic, formatting, nil
}

// isData reports whether a path holds YAML or JSON documents (not a script).
func isData(p string) bool {
	ext := path.Ext(p)
	return ext == ".yaml" || ext == ".yml" || ext == ".json"
}

package rebase

import (
	"context"
	"fmt"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// The fetch phases reuse what resolve extracted (source.ResolveIn keeps it under the work
// directory, see runner.resolve); they fetch only when it is absent, and then fetch the
// payloads in parallel.

// fetchBundle loads the bundle resolve extracted (or fetches it) and records its cost.
func (r *runner) fetchBundle(ctx context.Context) error {
	res := r.result
	ref := res.Resolution.Bundle
	r.fetching = ref.Ref
	var dir string
	var st source.FetchStats
	if x := res.Resolution.Extracted; x != nil && x.BundleDir != "" {
		dir, st = x.BundleDir, x.Bundle
	} else {
		dir = filepath.Join(r.work, "bundle")
		got, err := r.src.FetchBundle(ctx, ref, dir)
		if err != nil {
			return err
		}
		st = *got
	}
	res.Fetched = append(res.Fetched, st)
	b, err := bundle.Load(dir)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", ref.Ref, err)
	}
	r.bundle = b
	res.BundleVersion = ref.Version
	return nil
}

// fetchPayloads loads every arch's release-manifests/, from resolve's extraction or by
// fetching the arches in parallel; results and stats keep the arch order.
func (r *runner) fetchPayloads(ctx context.Context) error {
	res := r.result
	refs := res.Resolution.Payloads
	r.fetching = "the payloads " + payloadRefs(res.Resolution)
	loaded := make([]*payload.Payload, len(refs))
	stats := make([]source.FetchStats, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group // no cancellation, so the error reported is the first arch's own
	g.SetLimit(r.src.Concurrency())
	for i, p := range refs {
		g.Go(func() error {
			dir, st, err := r.payloadDir(ctx, p)
			if err != nil {
				errs[i] = err
				return nil
			}
			stats[i] = st
			if loaded[i], err = payload.Load(filepath.Join(dir, payload.Dir)); err != nil {
				errs[i] = fmt.Errorf("payload %s: %w", p.Ref, err)
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	r.payloads = map[string]*payload.Payload{}
	for i, p := range refs {
		r.payloads[p.Arch] = loaded[i]
		res.Fetched = append(res.Fetched, stats[i])
		// release.base comes from release-x86_64.json: its payload names the version
		// (nightly pairs have a version string per arch; each is in the lock's payloads).
		if res.PayloadVersion == "" || p.Arch == "x86_64" {
			res.PayloadVersion = loaded[i].Version()
		}
	}
	return nil
}

// payloadDir is where p's release-manifests/ are unpacked: resolve's copy, or a new fetch.
func (r *runner) payloadDir(ctx context.Context, p source.PayloadRef) (string, source.FetchStats, error) {
	if x := r.result.Resolution.Extracted; x != nil {
		if dir, ok := x.PayloadDirs[p.Arch]; ok {
			return dir, x.Payloads[p.Arch], nil
		}
	}
	dir := filepath.Join(r.work, "payload-"+p.Arch)
	st, err := r.src.FetchPayload(ctx, p, dir)
	if err != nil {
		return "", source.FetchStats{}, err
	}
	return dir, *st, nil
}

// loadSnapshotAssets reads the files the era's translation needs at commit: one request
// per file, in parallel, for a per-file source; a whole archive, directory or tarball
// otherwise.
func (r *runner) loadSnapshotAssets(ctx context.Context, commit string) (*snapshot.Assets, error) {
	paths, err := snapshot.Needed(r.era)
	if err != nil {
		return nil, err
	}
	a, err := snapshot.LoadWith(ctx, snapshot.LoadOptions{
		Source:      r.opts.SnapshotAssets,
		Commit:      commit,
		Paths:       paths,
		Fetch:       r.src.FetchURL,
		Concurrency: r.src.Concurrency(),
	})
	if err != nil {
		return nil, err
	}
	// With --check the lock is what is verified: lock.Compare reports a file that differs
	// from its recorded sha256 as drift, with the others.
	if old := r.result.old; old != nil && old.SnapshotAssets.Commit == commit && r.opts.Mode != ModeCheck {
		if err := verifySnapshotFiles(a, old.SnapshotAssets.Files); err != nil {
			return nil, err
		}
	}
	return a, nil
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

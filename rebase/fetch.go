package rebase

import (
	"context"
	"errors"
	"fmt"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// The fetch phases take what resolution read (source.Resolution.Content: the bundle and
// each payload, parsed once by rebase/bundle and rebase/payload); nothing is downloaded or
// parsed again. They stay phases of their own so the output keeps one line per input.

// fetchBundle takes the bundle resolve read and records its cost.
func (r *runner) fetchBundle(_ context.Context) error {
	res := r.result
	ref := res.Resolution.Bundle
	r.fetching = ref.Ref
	c, err := resolvedContent(res.Resolution)
	if err != nil {
		return err
	}
	res.Fetched = append(res.Fetched, c.BundleStats)
	r.bundle = c.Bundle
	res.BundleVersion = ref.Version
	return nil
}

// fetchPayloads takes every arch's release-manifests/ resolve read; results and stats keep
// the arch order.
func (r *runner) fetchPayloads(_ context.Context) error {
	res := r.result
	r.fetching = "the payloads " + payloadRefs(res.Resolution)
	c, err := resolvedContent(res.Resolution)
	if err != nil {
		return err
	}
	r.payloads = map[string]*payload.Payload{}
	for _, p := range res.Resolution.Payloads {
		loaded, ok := c.Payloads[p.Arch]
		if !ok {
			return fmt.Errorf("payload %s (%s): resolution kept no content for this arch", p.Ref, p.Arch)
		}
		r.payloads[p.Arch] = loaded
		res.Fetched = append(res.Fetched, c.PayloadStats[p.Arch])
		// release.base comes from release-x86_64.json: its payload names the version
		// (nightly pairs have a version string per arch; each is in the lock's payloads).
		if res.PayloadVersion == "" || p.Arch == "x86_64" {
			res.PayloadVersion = loaded.Version()
		}
	}
	return nil
}

// resolvedContent is what resolution read; a Resolution without it did not come from
// source.Resolve, and running on would translate nothing.
func resolvedContent(res *source.Resolution) (*source.Content, error) {
	if res == nil || res.Content == nil || res.Content.Bundle == nil {
		return nil, errors.New("the resolution holds no bundle or payload content (it did not come from source.Resolve)")
	}
	return res.Content, nil
}

// loadSnapshotAssets reads the files the era's translation needs at commit: one request
// per file, in parallel, for a per-file source; a whole archive, directory or tarball
// otherwise.
func (r *runner) loadSnapshotAssets(ctx context.Context, e era.Era, commit string) (*snapshot.Assets, error) {
	paths, err := snapshot.Needed(e)
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

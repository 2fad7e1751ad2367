package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// mirrorRef is a canonical reference as served by the loopback registry, which keeps
// the upstream host as the first path element.
func mirrorRef(host, ref string) string { return host + "/" + ref }

// archDigest returns the digest of a lock file per-arch value, which is either a digest
// or a digest reference.
func archDigest(v string) string {
	if i := strings.LastIndex(v, "@"); i >= 0 {
		return v[i+1:]
	}
	return v
}

// relatedRef is the reference a relatedImage is looked up by: its manifest list when it
// has one, else its (single) manifest.
func relatedRef(im lock.ImageDigests) string {
	if im.ListDigest != "" {
		return im.Repository + "@" + im.ListDigest
	}
	for _, a := range slices.Sorted(maps.Keys(im.Arch)) {
		return im.Repository + "@" + archDigest(im.Arch[a])
	}
	return im.Repository
}

// minimalBytes sizes, from the images in the registry, what a rebase recorded in lk
// cannot avoid downloading (see Minimal).
func minimalBytes(ctx context.Context, host string, lk *lock.Lock) (Minimal, error) {
	var m Minimal
	get := func(ref string) (*remote.Descriptor, error) {
		r, err := name.ParseReference(mirrorRef(host, ref), name.Insecure)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		d, err := remote.Get(r, remote.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		return d, nil
	}
	imageManifest := func(ref string) (*v1.Manifest, int64, error) {
		d, err := get(ref)
		if err != nil {
			return nil, 0, err
		}
		img, err := d.Image()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: expected an image: %w", ref, err)
		}
		mf, err := img.Manifest()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
		return mf, int64(len(d.Manifest)), nil
	}

	bundleRef := source.Repository(lk.Bundle.Ref) + "@" + lk.Bundle.Digest
	mf, n, err := imageManifest(bundleRef)
	if err != nil {
		return m, fmt.Errorf("bundle: %w", err)
	}
	n += mf.Config.Size
	for _, l := range mf.Layers {
		n += l.Size
	}
	m.Add("bundle", n)

	for _, p := range lk.Payloads {
		ref := source.Repository(p.Ref) + "@" + p.Digest
		mf, n, err := imageManifest(ref)
		if err != nil {
			return m, fmt.Errorf("payload %s: %w", p.Arch, err)
		}
		if len(mf.Layers) == 0 {
			return m, fmt.Errorf("payload %s %s: expected layers, found none", p.Arch, ref)
		}
		m.Add("payload "+p.Arch, n+mf.Config.Size+mf.Layers[len(mf.Layers)-1].Size)
	}

	var related int64
	seen := map[string]bool{}
	count := 0
	for _, im := range lk.Images {
		if im.From != "bundle" {
			continue // payload images come from image-references, with no fetch of their own
		}
		ref := relatedRef(im)
		if seen[ref] {
			continue
		}
		seen[ref] = true
		count++
		if im.ListDigest == "" {
			_, n, err := imageManifest(ref)
			if err != nil {
				return m, fmt.Errorf("relatedImage %s: %w", im.Name, err)
			}
			related += n
			continue
		}
		d, err := get(ref)
		if err != nil {
			return m, fmt.Errorf("relatedImage %s: %w", im.Name, err)
		}
		idx, err := d.ImageIndex()
		if err != nil {
			return m, fmt.Errorf("relatedImage %s %s: expected an index: %w", im.Name, ref, err)
		}
		im2, err := idx.IndexManifest()
		if err != nil {
			return m, fmt.Errorf("relatedImage %s %s: %w", im.Name, ref, err)
		}
		related += int64(len(d.Manifest))
		for _, a := range slices.Sorted(maps.Keys(im.Arch)) {
			size, ok := childSize(im2, archDigest(im.Arch[a]))
			if !ok {
				return m, fmt.Errorf("relatedImage %s %s: the index has no child %s for %s", im.Name, ref, im.Arch[a], a)
			}
			related += size
		}
	}
	m.Add(fmt.Sprintf("%d relatedImages (index + per-arch manifests)", count), related)

	n, files, err := snapshotFilesBytes(ctx, host, lk)
	if err != nil {
		return m, err
	}
	m.Add(fmt.Sprintf("%d snapshot files", files), n)
	return m, nil
}

// snapshotFilesBytes sizes the snapshot-controller operator files the era's translation
// reads, as the registry serves them at their raw URLs.
func snapshotFilesBytes(ctx context.Context, host string, lk *lock.Lock) (int64, int, error) {
	e, err := era.For(lk.OCP)
	if err != nil {
		return 0, 0, err
	}
	needed, err := snapshot.Needed(e)
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, p := range needed {
		url := "http://" + host + testregistry.RawFilePrefix + lk.SnapshotAssets.Commit + "/" + p
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, fmt.Errorf("snapshot file %s: %w", p, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %s %v", url, resp.Status, err)
		}
		total += n
	}
	return total, len(needed), nil
}

// childSize is the size of the index child with digest dg.
func childSize(idx *v1.IndexManifest, dg string) (int64, bool) {
	for _, c := range idx.Manifests {
		if c.Digest.String() == dg {
			return c.Size, true
		}
	}
	return 0, false
}

package rebase

import (
	"context"
	"fmt"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// imaged is the images step's output: each arch's image references by release key, the
// digests for the lock file, and the tree's release JSONs with them merged in.
type imaged struct {
	byArch  map[string]map[string]string
	lock    []lock.ImageDigests
	files   map[string][]byte
	changes map[string]*release.Change
}

// images takes per-arch digests for the bundle's relatedImages and the payloads' images
// and merges them into the tree's release JSONs.
func (r *run) images(ctx context.Context, s *graph.Step, b resolved, p fetched, tr *bundle.Result) (imaged, error) {
	out := imaged{byArch: map[string]map[string]string{}, files: map[string][]byte{}, changes: map[string]*release.Change{}}
	for _, a := range r.arches {
		out.byArch[a] = map[string]string{}
	}
	if err := r.bundleImages(ctx, s, b.res, tr, &out); err != nil {
		return out, err
	}
	if err := r.payloadImages(b, p, &out); err != nil {
		return out, err
	}
	for _, a := range r.arches {
		rel := releasefile.RepoPath(a)
		merged, change, err := release.MergeWith(r.releaseData[a], b.era, out.byArch[a], r.mergeOptions(tr))
		if err != nil {
			return out, fmt.Errorf("%s: %w", rel, err)
		}
		out.files[rel] = merged
		out.changes[a] = change
	}
	return out, nil
}

// bundleImages resolves each relatedImage to its per-arch digests (resolution's, or a new
// lookup) and records them for the release JSONs and the lock file.
func (r *run) bundleImages(ctx context.Context, s *graph.Step, res *source.Resolution, tr *bundle.Result, out *imaged) error {
	resolved := map[string]*source.ImageDigests{}
	for i := range res.RelatedImages {
		ri := &res.RelatedImages[i]
		resolved[ri.Image] = ri
	}
	for _, img := range tr.Images {
		d := resolved[img.Ref]
		if d == nil {
			var err error
			s.Fetch(img.Ref)
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
			out.byArch[a][img.Key] = repo + "@" + dg
			li.Arch[a] = dg
		}
		out.lock = append(out.lock, li)
	}
	return nil
}

// payloadImages takes the era's payload images from each arch's image-references and
// records them for the release JSONs and (in the era's key order) the lock file.
func (r *run) payloadImages(b resolved, p fetched, out *imaged) error {
	byKey := map[string]*lock.ImageDigests{}
	for _, a := range r.arches {
		imgs, err := p.payloads[a].Images(b.era)
		if err != nil {
			return fmt.Errorf("payload %s: %w", payloadRef(p.res, a), err)
		}
		for _, k := range b.era.PayloadImages {
			v, ok := imgs[k.Key]
			if !ok {
				return fmt.Errorf("payload %s: image-references has no tag %q", payloadRef(p.res, a), k.Name)
			}
			out.byArch[a][k.Key] = v
			li := byKey[k.Key]
			if li == nil {
				li = &lock.ImageDigests{Key: k.Key, Name: k.Name, From: "payload", Repository: source.Repository(v), Arch: map[string]string{}}
				byKey[k.Key] = li
			}
			li.Arch[a] = v
		}
	}
	for _, k := range b.era.PayloadImages {
		if li := byKey[k.Key]; li != nil {
			out.lock = append(out.lock, *li)
		}
	}
	return nil
}

// mergeOptions adds the bundle's undeclared images to the release keys, and retires bundle
// keys the previous run wrote (per its lock) that this bundle no longer has.
func (r *run) mergeOptions(tr *bundle.Result) release.MergeOptions {
	var o release.MergeOptions
	for _, img := range tr.Images {
		if img.Undeclared {
			o.Extra = append(o.Extra, img.Key)
		}
	}
	if old := r.old; old != nil {
		for _, li := range old.Images {
			if li.From == "bundle" {
				o.Retired = append(o.Retired, li.Key)
			}
		}
	}
	return o
}

package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// layerPicker names the layers of an image manifest a fetch is going to read.
type layerPicker func(*v1.Manifest) []v1.Descriptor

// allLayers is the bundle's picker: every layer is applied.
func allLayers(mf *v1.Manifest) []v1.Descriptor { return mf.Layers }

// topLayer is the payload's picker: release-manifests/ lives in the top layer (extraction
// still walks further down, one layer at a time, when it does not).
func topLayer(mf *v1.Manifest) []v1.Descriptor {
	if len(mf.Layers) == 0 {
		return nil
	}
	return mf.Layers[len(mf.Layers)-1:]
}

// prefetch downloads blobs into the cache in parallel, bounded by Options.Concurrency, and
// counts them in stats (when set). Errors are reported in descriptor order.
func (c *Client) prefetch(ctx context.Context, m *manifest, descs []v1.Descriptor, stats *Stats, s *stream) error {
	if m.layout != nil || c.opts.Offline {
		return nil // local blobs: nothing to overlap; blob() reports what is missing
	}
	sts := make([]blobStat, len(descs))
	errs := make([]error, len(descs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Concurrency)
	for i, d := range descs {
		g.Go(func() error {
			_, sts[i], errs[i] = c.streamBlob(gctx, m, d.Digest, d.Size, s.of(d.Digest))
			return errs[i]
		})
	}
	_ = g.Wait()
	for i, d := range descs {
		if stats != nil && errs[i] == nil {
			stats.add(d.Digest.String(), sts[i])
		}
	}
	return FirstError(ctx, errs...)
}

// FirstError returns the first error that is not a sibling's cancellation: when one
// parallel task fails, the others end with context.Canceled, which explains nothing. The
// order of errs is fixed by the caller, so the error reported does not depend on timing.
func FirstError(ctx context.Context, errs ...error) error {
	var canceled error
	for _, err := range errs {
		switch {
		case err == nil:
		case ctx.Err() == nil && errors.Is(err, context.Canceled):
			if canceled == nil {
				canceled = err
			}
		default:
			return err
		}
	}
	return canceled
}

// listAllTags follows repo's tags/list pagination (ggcr's Lister, sharing the puller's
// per-repository transport) and stops with a LimitError on a repeated next link, after
// MaxTagPages pages, or past MaxTagListBytes of tag names.
func (c *Client) listAllTags(ctx context.Context, repo name.Repository) ([]string, error) {
	lister, err := c.puller.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var tags []string
	var size int64
	for pages := 1; lister.HasNext(); pages++ {
		if pages > c.opts.MaxTagPages {
			return nil, &transport.LimitError{Reason: fmt.Sprintf("pagination goes on past %d pages (%d tags so far); the registry's tags/list does not end", c.opts.MaxTagPages, len(tags))}
		}
		page, err := lister.Next(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tags {
			size += int64(len(t))
		}
		if size > c.opts.MaxTagListBytes {
			return nil, &transport.LimitError{Reason: fmt.Sprintf("tag names exceed %d bytes after %d pages", c.opts.MaxTagListBytes, pages)}
		}
		tags = append(tags, page.Tags...)
		if page.Next != "" {
			if seen[page.Next] {
				return nil, &transport.LimitError{Reason: fmt.Sprintf("page %d links to a page already read (%s); the registry's pagination loops", pages, redact.URL(page.Next))}
			}
			seen[page.Next] = true
		}
	}
	return tags, nil
}

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
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
func (s *Source) prefetch(ctx context.Context, m *manifest, descs []v1.Descriptor, stats *FetchStats) error {
	if m.layout != nil || s.opts.Offline {
		return nil // local blobs: nothing to overlap; blob() reports what is missing
	}
	sts := make([]blobStat, len(descs))
	errs := make([]error, len(descs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	for i, d := range descs {
		g.Go(func() error {
			_, sts[i], errs[i] = s.blob(gctx, m, d.Digest, d.Size)
			return errs[i]
		})
	}
	_ = g.Wait()
	for i, d := range descs {
		if stats != nil && errs[i] == nil {
			stats.add(d.Digest.String(), sts[i])
		}
	}
	return firstError(ctx, errs...)
}

// firstError returns the first error that is not a sibling's cancellation: when one
// parallel task fails, the others end with context.Canceled, which explains nothing. The
// order of errs is fixed by the caller, so the error reported does not depend on timing.
func firstError(ctx context.Context, errs ...error) error {
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

// Extracted is what ResolveIn unpacked while checking versions, kept so the fetch phases
// reuse it instead of extracting the bundle and payloads a second time.
type Extracted struct {
	// BundleDir holds the bundle's manifests/ and metadata/.
	BundleDir string
	// Bundle is what fetching the bundle cost.
	Bundle FetchStats
	// PayloadDirs holds, per MicroShift arch, the payload's release-manifests/.
	PayloadDirs map[string]string
	// Payloads are what fetching each payload cost, per arch.
	Payloads map[string]FetchStats

	root string
	mu   sync.Mutex
}

// newExtracted keeps extractions under root; with root "" they go to temporary directories
// removed by the returned cleanup, as a plain Resolve wants.
func newExtracted(root string) *Extracted {
	return &Extracted{root: root, PayloadDirs: map[string]string{}, Payloads: map[string]FetchStats{}}
}

// dir returns a fresh directory for name and a cleanup for it (a no-op when kept).
func (x *Extracted) dir(name string) (string, func(), error) {
	if x.root == "" {
		d, err := os.MkdirTemp("", "lvms-rebase-"+name+"-")
		if err != nil {
			return "", nil, err
		}
		return d, func() { os.RemoveAll(d) }, nil
	}
	d := filepath.Join(x.root, name)
	if err := os.RemoveAll(d); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", nil, fmt.Errorf("creating %s: %w", d, err)
	}
	return d, func() {}, nil
}

func (x *Extracted) setBundle(dir string, st *FetchStats) {
	if x.root == "" || st == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.BundleDir, x.Bundle = dir, *st
}

func (x *Extracted) setPayload(arch, dir string, st *FetchStats) {
	if x.root == "" || st == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.PayloadDirs[arch], x.Payloads[arch] = dir, *st
}

// relatedDigests resolves every relatedImage per arch, in parallel; results keep the
// input order and every failure is reported (joined, in input order).
func (s *Source) relatedDigests(ctx context.Context, related []relatedImage) ([]ImageDigests, error) {
	out := make([]*ImageDigests, len(related))
	errs := make([]error, len(related))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	for i, ri := range related {
		g.Go(func() error {
			d, err := s.ImageDigests(gctx, ri.Image, s.arches)
			if err != nil {
				errs[i] = fmt.Errorf("relatedImage %q: %w", ri.Name, err)
				return nil // keep going: every broken image is reported at once
			}
			d.Name = ri.Name
			out[i] = d
			return nil
		})
	}
	_ = g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res := make([]ImageDigests, 0, len(out))
	for _, d := range out {
		res = append(res, *d)
	}
	return res, nil
}

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sync/errgroup"
)

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

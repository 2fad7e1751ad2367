package source

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

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

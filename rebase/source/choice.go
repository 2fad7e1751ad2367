package source

import (
	"context"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// ChooseLVMS picks the LVMS bundle minor for ocp: forced (the caller's LVMS option) wins; a
// pinned bundle (Options.BundleRef) is taken for its CSV's minor (era.Pinned with Minor "",
// which the caller completes once the bundle is read); otherwise the era policy applied to the
// minors published in the bundle repository (PolicyLVMS). A forced minor that is no strict X.Y
// is an *option.Error, found before any request.
func (s *Source) ChooseLVMS(ctx context.Context, ocp, forced string) (era.Choice, error) {
	if forced != "" {
		m, err := era.MinorOf(forced)
		if err != nil || m != strings.TrimSpace(forced) {
			return era.Choice{}, option.Errorf(option.LVMS, "%q: expected X.Y (e.g. 4.21)", forced)
		}
		return era.Forced(m), nil
	}
	if s.opts.BundleRef != "" {
		return era.Pinned(""), nil
	}
	return s.PolicyLVMS(ctx, ocp)
}

// PolicyLVMS is the era policy's LVMS minor for ocp (era.Choose): a pin of the era table
// without a request, else chosen from the minors published in the bundle repository.
func (s *Source) PolicyLVMS(ctx context.Context, ocp string) (era.Choice, error) {
	if p, err := era.PolicyFor(ocp); err == nil && p.Pin != "" {
		return era.Choose(ocp, nil)
	}
	published, err := s.BundleMinors(ctx)
	if err != nil {
		return era.Choice{}, err
	}
	return era.Choose(ocp, published)
}

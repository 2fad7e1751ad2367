package rebase

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// ResolveOptions configure Resolve.
type ResolveOptions struct {
	// OCP is the OpenShift minor "X.Y" (required).
	OCP string
	// LVMS forces the LVMS bundle minor "X.Y"; empty applies the era policy (era.Choose).
	LVMS string
	// Source configures registries, auth, mirrors, cache and pins; its Logger hears the
	// warnings.
	Source source.Options
}

// Resolve picks what a rebase onto o.OCP would use, without a MicroShift tree: the LVMS minor
// (the era policy applied to the published minors, or forced), the newest bundle of it, the
// payloads and every relatedImage's per-arch digests. The LVMS choice is in the resolution,
// and its warning (a minor lagging OpenShift's) is logged and listed first in Warnings. It
// writes nothing but the image cache. Option mistakes are *option.Error; a file an option
// names that cannot be used (an IDMS or auth file that does not load) is an *option.PathError,
// an error of the run as in Run.
func Resolve(ctx context.Context, o ResolveOptions) (*source.Resolution, error) {
	if o.OCP == "" {
		return nil, option.Errorf(option.OCP, "X.Y is required (e.g. 4.18)")
	}
	if err := checkMinors(o.OCP, o.LVMS); err != nil {
		return nil, err
	}
	src, err := source.New(o.Source)
	if err != nil {
		return nil, err
	}
	choice, err := src.ChooseLVMS(ctx, o.OCP, o.LVMS)
	if err != nil {
		return nil, err
	}
	res, err := src.Resolve(ctx, o.OCP, choice.Minor)
	if err != nil {
		return nil, err
	}
	if choice.Minor == "" {
		// A pinned bundle without a forced minor is chosen for its CSV's minor.
		if choice.Minor, err = era.MinorOf(res.Bundle.CSVVersion); err != nil {
			return nil, fmt.Errorf("bundle %s: CSV spec.version: %w", res.Bundle.Ref, err)
		}
	}
	if choice.Warning != "" {
		logger(o.Source.Logger).Warn(choice.Warning)
		res.Warnings = append([]string{choice.Warning}, res.Warnings...)
	}
	res.LVMS = &choice
	return res, nil
}

// Validate checks what needs neither the network nor the tree's contents: the minors are
// strict X.Y with an era, the payload rule is known, the checkout is a directory. Run calls it
// first, and a caller may call it earlier (fleet.Run does, once for every branch). Mistakes
// are *option.Error; a checkout, --snapshot-assets path or policy file that cannot be used is
// an *option.PathError (bad input, not a mistake on the command line).
func (o Options) Validate() error {
	if err := checkMinors(o.OCP, o.LVMS); err != nil {
		return err
	}
	switch o.Payload {
	case "", PayloadTree, PayloadNewest:
	default:
		return option.Errorf(option.Payload, "%q: expected tree or newest", o.Payload)
	}
	dir := o.MicroShiftDir
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return option.Pathf(option.MicroShiftDir, dir, "%q: expected an existing directory (a MicroShift checkout)", dir)
	}
	if s := o.SnapshotAssets; snapshot.IsLocal(s) {
		if err := snapshot.CheckLocal(s); err != nil {
			return &option.PathError{Option: option.SnapshotAssets, Path: s, Err: err}
		}
	}
	return o.Provenance.validate()
}

// checkMinors checks a given OpenShift minor (strict X.Y, with a storage era) and a given
// LVMS minor (strict X.Y).
func checkMinors(ocp, lvms string) error {
	if ocp != "" {
		if _, err := era.ParseMinor(ocp); err != nil {
			return &option.Error{Option: option.OCP, Err: err}
		}
		if _, err := era.OCPRowFor(ocp); err != nil {
			return &option.Error{Option: option.OCP, Err: err}
		}
	}
	if lvms != "" {
		if _, err := era.ParseMinor(lvms); err != nil {
			return &option.Error{Option: option.LVMS, Err: err}
		}
	}
	return nil
}

// logger is l, or a logger that discards.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

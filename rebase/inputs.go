package rebase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// ErrUsage marks errors that are the caller's mistake but not about one option's value (a
// release.base that is not a version, a configuration file that does not load); a mistake in
// one option's value is an *option.Error. IsUsage tells both.
var ErrUsage = errors.New("usage")

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// IsUsage reports whether err is the caller's mistake: an *option.Error or ErrUsage.
func IsUsage(err error) bool {
	var oe *option.Error
	return errors.As(err, &oe) || errors.Is(err, ErrUsage)
}

// usageOf marks err, a caller's mistake found by a library (a configuration file that does
// not load), as ErrUsage and reads as err.
type usageOf struct{ err error }

func (e usageOf) Error() string        { return e.err.Error() }
func (e usageOf) Unwrap() error        { return e.err }
func (e usageOf) Is(target error) bool { return target == ErrUsage }

// Payload rules (Options.Payload), as the lock records them (rebase/recorded).
const (
	PayloadTree   = recorded.PayloadTree
	PayloadNewest = recorded.PayloadNewest
	PayloadPinned = recorded.PayloadPinned
)

// treeBase reads release.base of the tree's recorded.BaseFile and its minor, parsed as strictly as
// --ocp (era.VersionMinor): "5", "v5.0.0" or "05.0.1" is an error naming the file and field.
func treeBase(root string) (base, minor string, err error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(recorded.BaseFile)))
	if err != nil {
		return "", "", err
	}
	f, err := release.Read(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", recorded.BaseFile, err)
	}
	if minor, err = era.VersionMinor(f.Base); err != nil {
		return f.Base, "", usageErr("%s: release.base %v", recorded.BaseFile, err)
	}
	return f.Base, minor, nil
}

// chooseOCP returns the OpenShift minor of the run: given (--ocp) or, without it, the minor
// of the tree's release.base. A given minor that contradicts the tree is a usage error
// unless allowMismatch (a branch whose OCP rebase has not run yet); a release.base that is
// not a strict version is an error either way.
func chooseOCP(given, root string, allowMismatch bool) (string, error) {
	base, m, err := treeBase(root)
	if errors.Is(err, ErrUsage) {
		return "", err
	}
	if given == "" {
		if err != nil {
			return "", option.Errorf(option.OCP, "X.Y not given and the tree's OpenShift minor is unknown: %v (give %s, e.g. %[2]s 4.18)", err, option.OCP)
		}
		return m, nil
	}
	if err != nil {
		return given, nil // no release JSON: the images phase names the missing file
	}
	if m != given && !allowMismatch {
		return "", option.Errorf(option.OCP, "%[2]s differs from the tree's OpenShift %[3]s (release.base %[4]s in %[5]s); drop %[1]s to use the tree's, or pass %[6]s for a branch whose OCP rebase has not run yet",
			option.OCP, given, m, base, recorded.BaseFile, option.AllowBaseMismatch)
	}
	return given, nil
}

// choosePayloads applies the payload rule: pins win; else --payload newest; else the tree's
// last_rebase.sh when it exists (required with --payload tree). Tree pins go into
// o.Source.ReleaseRefs for the requested arches. It returns the rule and its source file.
func choosePayloads(o *Options) (rule, from string, err error) {
	if len(o.Source.ReleaseRefs) > 0 {
		return PayloadPinned, "", nil
	}
	switch o.Payload {
	case PayloadNewest:
		return PayloadNewest, "", nil
	case "", PayloadTree:
	default:
		return "", "", option.Errorf(option.Payload, "%q: expected tree or newest", o.Payload)
	}
	data, err := os.ReadFile(filepath.Join(o.MicroShiftDir, filepath.FromSlash(recorded.LastRebaseFile)))
	if errors.Is(err, fs.ErrNotExist) && o.Payload == "" {
		return PayloadNewest, "", nil
	}
	if err != nil {
		return "", "", option.Errorf(option.Payload, "tree: %v", err)
	}
	specs, err := recorded.ParseLastRebase(data)
	if err != nil {
		return "", "", err
	}
	arches := o.Source.Arches
	if len(arches) == 0 {
		arches = source.DefaultArches
	}
	refs := map[string]string{}
	for _, a := range arches {
		if specs[a] == "" {
			return "", "", fmt.Errorf("%s names no %s release (it has x86_64 and aarch64); pin it with %s", recorded.LastRebaseFile, a, option.For(option.OCPRelease, a))
		}
		refs[a] = specs[a]
	}
	o.Source.ReleaseRefs = refs
	return PayloadTree, recorded.LastRebaseFile, nil
}

// resolve chooses the LVMS minor, resolves the bundle and payloads, and combines the era of
// the OpenShift minor with the era of the LVMS minor actually resolved. It starts the lanes
// (lanes.go) and records their first steps: the bundle's error first, then the payloads',
// then the era's, whatever finished first.
func (r *runner) resolve(ctx context.Context) error {
	res := r.result
	r.fetching = "the newest inputs for OpenShift " + r.opts.OCP
	r.lanes = r.startLanes(ctx)
	b, err := r.lanes.resolved.Wait()
	if err != nil {
		return r.pinsDisagree(err)
	}
	p, err := r.lanes.payloadsResolved.Wait()
	if err != nil {
		return r.pinsDisagree(err)
	}
	res.Resolution = b.res.Join(p)
	e, err := r.lanes.era.Wait()
	if err != nil {
		return err
	}
	choice := e.choice
	if choice.Warning != "" {
		r.warn(choice.Warning)
	}
	// The source logged its warnings as it found them; they are recorded here.
	res.Warnings = append(res.Warnings, res.Resolution.Warnings...)
	res.Resolution.LVMS = &choice
	if res.PayloadRule != "" {
		res.Resolution.PayloadRule = res.PayloadRule
	}
	res.PayloadRule = res.Resolution.PayloadRule
	res.LVMS = &choice
	r.era = e.era
	res.Era, res.OCPEra = r.era.Name, r.era.OCPEra
	return nil
}

// pinsDisagree turns a resolution error of --check whose cause is the lock itself into
// drift, the lock differing from what its inputs give: a pinned payload that is not the
// version its tag or the lock's OpenShift minor says (source.MismatchError), or a pinned
// digest the registry does not have (source.UnknownDigestError).
func (r *runner) pinsDisagree(err error) error {
	var mm *source.MismatchError
	var ud *source.UnknownDigestError
	if err == nil || r.opts.Mode != ModeCheck || (!errors.As(err, &mm) && !errors.As(err, &ud)) {
		return err
	}
	r.result.Drift = true
	r.result.LockDrift = append(r.result.LockDrift, err.Error())
	return fmt.Errorf("%w: lock file %s: %v", ErrDrift, lock.Path, err)
}

package rebase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// ChooseLVMS picks the LVMS bundle minor for ocp: forced (--lvms) wins; a pinned bundle
// without --lvms is taken for its CSV's minor (Minor ""); otherwise the era policy applied
// to the minors published in the bundle repository.
func ChooseLVMS(ctx context.Context, src *source.Source, o source.Options, ocp, forced string) (era.Choice, error) {
	if forced != "" {
		return forcedLVMS(forced)
	}
	if o.BundleRef != "" {
		return bundleChoice(""), nil
	}
	if p, err := era.PolicyFor(ocp); err == nil && p.Pin != "" {
		return era.Choose(ocp, nil)
	}
	published, err := src.BundleMinors(ctx)
	if err != nil {
		return era.Choice{}, err
	}
	return era.Choose(ocp, published)
}

// forcedLVMS is the choice --lvms makes, or a usage error when it names no minor.
func forcedLVMS(forced string) (era.Choice, error) {
	m, err := era.MinorOf(forced)
	if err != nil || m != strings.TrimSpace(forced) {
		return era.Choice{}, option.Errorf(option.LVMS, "%q: expected X.Y (e.g. 4.21)", forced)
	}
	return forcedChoice(m), nil
}

// forcedChoice and bundleChoice are the LVMS choices Options.LVMS and a pinned bundle
// (source.Options.BundleRef) make.
func forcedChoice(m string) era.Choice {
	return era.Choice{Minor: m, Rule: "flag", Reason: "forced: LVMS " + m + " was asked for"}
}

func bundleChoice(m string) era.Choice {
	return era.Choice{Minor: m, Rule: "bundle", Reason: "the minor of the pinned bundle"}
}

// legacyReason is how locks written before November 2026 worded a forced or pinned choice:
// with the option as the front end spells it (the CLI's flag), which --check still accepts.
func legacyReason(rule, minor string) string {
	if rule == "flag" {
		return "forced with " + option.LVMS.String() + " " + minor
	}
	return "the minor of the bundle pinned with " + option.LVMSBundle.String()
}

// lockedChoice is the choice the lock's recorded LVMS rule gives for the bundle it pins (of
// minor, its CSV's), for --check to compare with what the lock records: an edited minor,
// rule or reason differs from it. The era policy is applied as if that minor were the only
// one published, which gives a policy choice back exactly (exact, newest-below and pinned
// depend only on the OpenShift minor and the minor chosen); a minor the policy would never
// pick gives the policy's refusal as the reason.
func lockedChoice(ocp string, recorded *lock.LVMS, minor string) era.Choice {
	var c era.Choice
	switch recorded.Rule {
	case "flag":
		c = forcedChoice(minor)
	case "bundle":
		c = bundleChoice(minor)
	}
	if c.Rule != "" {
		if recorded.Reason == legacyReason(c.Rule, minor) {
			c.Reason = recorded.Reason
		}
		return c
	}
	c, err := era.Choose(ocp, []string{minor})
	if err != nil {
		return era.Choice{Minor: minor, Rule: "none", Reason: err.Error()}
	}
	c.Warning = ""
	return c
}

// resolve chooses the LVMS minor, resolves the bundle and payloads, and combines the era of
// the OpenShift minor with the era of the LVMS minor actually resolved. It starts the lanes
// (lanes.go) and records their first steps: the bundle's error first, then the payloads',
// then the era's, whatever finished first.
func (r *runner) resolve(ctx context.Context) error {
	res := r.result
	r.fetching = "the newest inputs for OpenShift " + r.opts.OCP
	if r.opts.LVMS != "" {
		// A forced minor that is no minor is the caller's mistake: no request is made for it.
		if _, err := forcedLVMS(r.opts.LVMS); err != nil {
			return err
		}
	}
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

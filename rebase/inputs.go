package rebase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/shrecord"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// ErrUsage marks errors that are the caller's mistake (exit 2): an --ocp that contradicts
// the tree, --payload tree without last_rebase.sh, …
var ErrUsage = errors.New("usage")

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Payload rules (Options.Payload).
const (
	PayloadTree   = "tree"   // the pull specs of the tree's last_rebase.sh
	PayloadNewest = "newest" // the newest GA z of the minor common to every arch
	PayloadPinned = "pinned" // --ocp-release* (or the lock, with --check)
)

// BaseFile is the release JSON whose release.base gives the tree's OpenShift minor.
var BaseFile = releasefile.RepoPath("x86_64")

// LastRebaseFile records the payloads MicroShift's own rebase.sh used.
const LastRebaseFile = "scripts/auto-rebase/last_rebase.sh"

// MinorOf returns the "X.Y" of an OpenShift version: a GA "4.18.12", a nightly
// "5.0.0-0.nightly-2026-07-23-224236" or "5.0.0-0.nightly-arm64-…", or "X.Y" itself.
func MinorOf(version string) (string, error) {
	v, err := semver.NewVersion(strings.TrimSpace(version))
	if err != nil {
		return "", fmt.Errorf("OpenShift version %q: expected X.Y, X.Y.Z or X.Y.Z-<pre-release>: %w", version, err)
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor()), nil
}

// treeBase reads release.base of the tree's BaseFile and its minor, parsed as strictly as
// --ocp (era.VersionMinor): "5", "v5.0.0" or "05.0.1" is an error naming the file and field.
func treeBase(root string) (base, minor string, err error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(BaseFile)))
	if err != nil {
		return "", "", err
	}
	f, err := release.Read(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", BaseFile, err)
	}
	if minor, err = era.VersionMinor(f.Base); err != nil {
		return f.Base, "", usageErr("%s: release.base %v", BaseFile, err)
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
			return "", usageErr("%s X.Y not given and the tree's OpenShift minor is unknown: %v (give %[1]s, e.g. %[1]s 4.18)", option.OCP, err)
		}
		return m, nil
	}
	if err != nil {
		return given, nil // no release JSON: the images phase names the missing file
	}
	if m != given && !allowMismatch {
		return "", usageErr("%[1]s %[2]s differs from the tree's OpenShift %[3]s (release.base %[4]s in %[5]s); drop %[1]s to use the tree's, or pass %[6]s for a branch whose OCP rebase has not run yet",
			option.OCP, given, m, base, BaseFile, option.AllowBaseMismatch)
	}
	return given, nil
}

// lastRebase is the command last_rebase.sh records: rebase.sh to <x86_64 release> <aarch64 release>.
var lastRebase = shrecord.Spec{Scripts: []string{"rebase.sh"}, Sub: "to"}

// ParseLastRebase reads MicroShift's last_rebase.sh as bash reads it (rebase/shrecord): its one
// executed `./scripts/auto-rebase/rebase.sh to "<x86_64 release>" "<aarch64 release>"`. It
// returns the pull spec per MicroShift arch.
func ParseLastRebase(data []byte) (map[string]string, error) {
	call, err := shrecord.Find(LastRebaseFile, data, lastRebase)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return nil, fmt.Errorf("%s: no `rebase.sh to <x86_64 release> <aarch64 release>` command (comments, echo arguments and here-documents do not count)", LastRebaseFile)
	}
	if len(call.Args) != 2 {
		return nil, fmt.Errorf("%s: line %d: rebase.sh to: expected an x86_64 and an aarch64 release pull spec, got %d argument(s)", LastRebaseFile, call.Line, len(call.Args))
	}
	return map[string]string{"x86_64": call.Args[0], "aarch64": call.Args[1]}, nil
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
		return "", "", usageErr("%s %q: expected tree or newest", option.Payload, o.Payload)
	}
	data, err := os.ReadFile(filepath.Join(o.MicroShiftDir, filepath.FromSlash(LastRebaseFile)))
	if errors.Is(err, fs.ErrNotExist) && o.Payload == "" {
		return PayloadNewest, "", nil
	}
	if err != nil {
		return "", "", usageErr("%s tree: %v", option.Payload, err)
	}
	specs, err := ParseLastRebase(data)
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
			return "", "", fmt.Errorf("%s names no %s release (it has x86_64 and aarch64); pin it with %s", LastRebaseFile, a, option.For(option.OCPRelease, a))
		}
		refs[a] = specs[a]
	}
	o.Source.ReleaseRefs = refs
	return PayloadTree, LastRebaseFile, nil
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
	m, err := MinorOf(forced)
	if err != nil || m != strings.TrimSpace(forced) {
		return era.Choice{}, usageErr("%s %q: expected X.Y (e.g. 4.21)", option.LVMS, forced)
	}
	return forcedChoice(m), nil
}

// forcedChoice and bundleChoice are the LVMS choices --lvms and --lvms-bundle make.
func forcedChoice(m string) era.Choice {
	return era.Choice{Minor: m, Rule: "flag", Reason: "forced with --lvms " + m}
}

func bundleChoice(m string) era.Choice {
	return era.Choice{Minor: m, Rule: "bundle", Reason: "the minor of the bundle pinned with --lvms-bundle"}
}

// lockedChoice is the choice the lock's recorded LVMS rule gives for the bundle it pins (of
// minor, its CSV's), for --check to compare with what the lock records: an edited minor,
// rule or reason differs from it. The era policy is applied as if that minor were the only
// one published, which gives a policy choice back exactly (exact, newest-below and pinned
// depend only on the OpenShift minor and the minor chosen); a minor the policy would never
// pick gives the policy's refusal as the reason.
func lockedChoice(ocp string, recorded *lock.LVMS, minor string) era.Choice {
	switch recorded.Rule {
	case "flag":
		return forcedChoice(minor)
	case "bundle":
		return bundleChoice(minor)
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
	b, err := r.lanes.resolved.wait()
	if err != nil {
		return r.pinsDisagree(err)
	}
	p, err := r.lanes.payloadsResolved.wait()
	if err != nil {
		return r.pinsDisagree(err)
	}
	res.Resolution = b.res.Join(p)
	e, err := r.lanes.era.wait()
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
	if r.opts.Mode != ModeCheck || (!errors.As(err, &mm) && !errors.As(err, &ud)) {
		return err
	}
	r.result.Drift = true
	r.result.LockDrift = append(r.result.LockDrift, err.Error())
	return fmt.Errorf("%w: lock file %s: %v", ErrDrift, lock.Path, err)
}

// payloadRuleDrift verifies the lock's payload rule against the tree: rule tree names
// last_rebase.sh and pins the payloads that file runs rebase.sh with now; rule newest pins
// the GA tags of the payload version; newest and pinned read no file. Older locks record no
// rule. A last_rebase.sh that cannot be read is an error, as in a run.
func payloadRuleDrift(root string, l *lock.Lock) ([]string, error) {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	switch l.PayloadRule {
	case "":
		return nil, nil
	case PayloadTree:
		if l.PayloadSource != LastRebaseFile {
			add("payloadSource: the lock records %q, rule tree reads %s", l.PayloadSource, LastRebaseFile)
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(LastRebaseFile)))
		if errors.Is(err, fs.ErrNotExist) {
			add("payloadRule: the lock records tree, the tree has no %s", LastRebaseFile)
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		specs, err := ParseLastRebase(data)
		if err != nil {
			return nil, err
		}
		for _, p := range l.Payloads {
			if want := lockRef(specs[p.Arch], p.Digest); p.Ref != want {
				add("payloads[%s].ref: the lock records %s, %s gives %s", p.Arch, p.Ref, LastRebaseFile, want)
			}
		}
	default:
		if l.PayloadSource != "" {
			add("payloadSource: the lock records %q, rule %s reads no file", l.PayloadSource, l.PayloadRule)
		}
		for _, p := range l.Payloads {
			if l.PayloadRule == PayloadNewest && !strings.HasSuffix(p.Ref, ":"+p.Version+"-"+p.Arch) {
				add("payloads[%s].ref: the lock records %s, rule newest pins the GA tag %s-%s", p.Arch, p.Ref, p.Version, p.Arch)
			}
		}
	}
	return out, nil
}

package era

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
)

// minorOf parses "X.Y" (a patch or pre-release is ignored) into X.Y.0.
func minorOf(what, s string) (*semver.Version, error) {
	v, err := semver.NewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%s version %q: expected X.Y (e.g. 4.18): %w", what, s, err)
	}
	return semver.New(v.Major(), v.Minor(), 0, "", ""), nil
}

func matches(constraint string, v *semver.Version) bool {
	if constraint == "" {
		return true
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		panic(fmt.Sprintf("era table: bad constraint %q: %v", constraint, err)) // a test parses every one
	}
	return c.Check(v)
}

func short(v *semver.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// OCPRowFor returns the OCP-axis row of an OpenShift minor.
func OCPRowFor(ocp string) (OCPRow, error) {
	v, err := minorOf("OpenShift", ocp)
	if err != nil {
		return OCPRow{}, err
	}
	for _, r := range OCPTable {
		if matches(r.OCP, v) {
			return r, nil
		}
	}
	return OCPRow{}, fmt.Errorf("OpenShift %s: no storage era declared (supported: %s)", short(v), Supported())
}

// LVMSRowFor returns the LVMS-axis row for an LVMS bundle minor shipped on an OpenShift minor.
func LVMSRowFor(lvms, ocp string) (LVMSRow, error) {
	lv, err := minorOf("LVMS", lvms)
	if err != nil {
		return LVMSRow{}, err
	}
	ov, err := minorOf("OpenShift", ocp)
	if err != nil {
		return LVMSRow{}, err
	}
	for _, r := range LVMSTable {
		if matches(r.LVMS, lv) && matches(r.OCP, ov) {
			return r, nil
		}
	}
	return LVMSRow{}, fmt.Errorf("LVMS %s on OpenShift %s: no LVMS era declared for this pair (LVMS rows: %s)", short(lv), short(ov), lvmsRows())
}

// PolicyFor returns the LVMS-minor policy of an OpenShift minor.
func PolicyFor(ocp string) (Policy, error) {
	v, err := minorOf("OpenShift", ocp)
	if err != nil {
		return Policy{}, err
	}
	for _, p := range Policies {
		if matches(p.OCP, v) {
			return p, nil
		}
	}
	return Policy{}, fmt.Errorf("OpenShift %s: no LVMS minor policy declared (supported: %s)", short(v), Supported())
}

// Combine joins the OCP row of ocp and the LVMS row of lvms into one Era.
func Combine(ocp, lvms string) (Era, error) {
	o, err := OCPRowFor(ocp)
	if err != nil {
		return Era{}, err
	}
	l, err := LVMSRowFor(lvms, ocp)
	if err != nil {
		return Era{}, err
	}
	p, _ := PolicyFor(ocp)
	lv, _ := minorOf("LVMS", lvms)
	return Era{
		Name: l.Name, OCPEra: o.Name, LVMSMinor: short(lv), OCP: o.OCP, Driver: l.Driver, BundleMinor: p.Pin,
		Namespace: o.Namespace, SnapshotNamespace: o.SnapshotNamespace,
		LVMSOverlay: l.LVMSOverlay, SnapshotOverlay: o.SnapshotOverlay,
		BundleImages: l.BundleImages, UnshippedImages: l.UnshippedImages, PayloadImages: o.PayloadImages,
		CSV: l.CSV, BundleInclude: l.BundleInclude, SnapshotWebhook: o.SnapshotWebhook, SnapshotSplit: o.SnapshotSplit,
		LiteralImages:     slices.Concat(o.LiteralImages, l.LiteralImages),
		UnshippedWebhooks: l.UnshippedWebhooks, WebhookServices: l.WebhookServices, SuggestedNamespace: l.SuggestedNamespace,
		Records: o.Records, Retired: slices.Concat(o.Retired, l.Retired),
	}, nil
}

// For returns the era of an OpenShift minor "X.Y" with the LVMS minor its policy takes when
// that minor is published (the pin, else the OpenShift minor itself). Use Choose + Combine
// to account for what is really published.
func For(ocp string) (Era, error) {
	if _, err := OCPRowFor(ocp); err != nil {
		return Era{}, err
	}
	p, err := PolicyFor(ocp)
	if err != nil {
		return Era{}, err
	}
	lvms := p.Pin
	if lvms == "" {
		lvms = ocp
	}
	return Combine(ocp, lvms)
}

// Supported describes the supported OpenShift minors for error messages.
func Supported() string {
	names := make([]string, 0, len(OCPTable))
	for _, r := range OCPTable {
		names = append(names, r.OCP)
	}
	return "[" + strings.Join(names, "; ") + "]"
}

func lvmsRows() string {
	var out []string
	for _, r := range LVMSTable {
		s := "LVMS " + r.LVMS
		if r.OCP != "" {
			s += " on OpenShift " + r.OCP
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// Table lists one Era per LVMS row, combined with the oldest OpenShift minor whose policy
// takes that row: the layouts tests render and translate. It is derived from the axes, on
// first use: deriving it at init cost every run ~20 ms of start-up before its first request.
var Table = sync.OnceValue(func() []Era {
	var out []Era
	seen := map[string]bool{}
	for _, m := range KnownMinors() {
		e, err := For(m)
		if err != nil || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	return out
})

// KnownMinors are the OpenShift minors the tables are checked against: 4.14 … 4.23 and
// 5.0 … 5.9.
func KnownMinors() []string {
	var out []string
	for m := 14; m <= 23; m++ {
		out = append(out, fmt.Sprintf("4.%d", m))
	}
	for m := 0; m <= 9; m++ {
		out = append(out, fmt.Sprintf("5.%d", m))
	}
	return out
}

// Choice is the LVMS minor picked for an OpenShift minor, and why.
type Choice struct {
	Minor string
	// Rule is "exact" (same minor as OpenShift), "pinned" (the era table pins it),
	// "newest-below" (no bundle of the OpenShift minor; the newest older one) or "flag"
	// (--lvms) / "bundle" (--lvms-bundle) / "lock" (--check).
	Rule   string
	Reason string
	// Warning is set when the choice lags the OpenShift minor.
	Warning string
}

// Choose applies the policy of ocp to the published LVMS minors ("X.Y", any order).
func Choose(ocp string, published []string) (Choice, error) {
	p, err := PolicyFor(ocp)
	if err != nil {
		return Choice{}, err
	}
	ov, _ := minorOf("OpenShift", ocp)
	o := short(ov)
	if p.Pin != "" {
		return Choice{Minor: p.Pin, Rule: "pinned", Reason: fmt.Sprintf("the era table pins LVMS %s for OpenShift %s: %s", p.Pin, o, p.Why)}, nil
	}
	floor := ov
	if p.Floor != "" {
		floor, _ = minorOf("LVMS", p.Floor)
	}
	var below []*semver.Version
	for _, s := range published {
		v, err := minorOf("LVMS", s)
		if err != nil {
			continue
		}
		if v.Equal(ov) {
			return Choice{Minor: o, Rule: "exact", Reason: fmt.Sprintf("an LVMS %s bundle is published", o)}, nil
		}
		if v.LessThan(ov) && !v.LessThan(floor) {
			below = append(below, v)
		}
	}
	if len(below) == 0 {
		return Choice{}, fmt.Errorf("OpenShift %s: no LVMS bundle of minor %s is published, nor any from %s below it (published: %s)",
			o, o, short(floor), listOrNone(published))
	}
	sort.Sort(semver.Collection(below))
	got := short(below[len(below)-1])
	return Choice{Minor: got, Rule: "newest-below",
		Reason:  fmt.Sprintf("no LVMS %s bundle is published; %s is the newest published LVMS minor below it", o, got),
		Warning: fmt.Sprintf("OpenShift %s: no LVMS %s bundle is published; using LVMS %s, the newest published minor below it", o, o, got),
	}, nil
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ", ")
}

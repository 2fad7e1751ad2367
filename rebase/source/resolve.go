package source

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/fetch"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/tags"
)

// Resolve picks the bundle and per-arch payloads for OpenShift minor ocp (X.Y). bundleMinor
// is the LVMS minor to look for (empty: ocp). Pins in Options skip the matching resolution.
// It checks the CSV's spec.version minor (bundleMinor) and each payload's release-metadata
// version (equal to the tag, minor ocp), and resolves every relatedImage per arch. What it
// read of the bundle and the payloads comes back parsed in Resolution.Content. The bundle
// and the payloads resolve in parallel (ResolveBundle, ResolvePayloads), as do the arches
// and the relatedImages (bounded by Options.Concurrency); errors are reported in a fixed
// order (bundle, then payloads by arch).
func (s *Source) Resolve(ctx context.Context, ocp, bundleMinor string) (*Resolution, error) {
	if _, err := era.ParseMinor(ocp); err != nil {
		return nil, fmt.Errorf("OpenShift version %w", err)
	}
	if _, err := s.bundleMinor(ocp, bundleMinor); err != nil {
		return nil, err
	}
	var b, p *Resolution
	var bundleErr, plErr error
	// Neither half cancels the other: each error is then a real one, and the bundle's is
	// reported first, whatever finished first.
	var g errgroup.Group
	g.Go(func() error {
		b, bundleErr = s.ResolveBundle(ctx, ocp, bundleMinor)
		return nil
	})
	g.Go(func() error {
		p, plErr = s.ResolvePayloads(ctx, ocp)
		return nil
	})
	_ = g.Wait()
	if err := fetch.FirstError(ctx, bundleErr, plErr); err != nil {
		return nil, err
	}
	return b.Join(p), nil
}

// ResolveBundle is the bundle half of Resolve: the bundle (its digest and content, its CSV
// version checked against bundleMinor, default ocp unless a bundle is pinned) and its
// relatedImages' per-arch digests. It reads no payload, so a caller can run it while the
// payloads download (ResolvePayloads) and use the bundle first.
func (s *Source) ResolveBundle(ctx context.Context, ocp, bundleMinor string) (*Resolution, error) {
	bundleMinor, err := s.bundleMinor(ocp, bundleMinor)
	if err != nil {
		return nil, err
	}
	x := newContent()
	bundle, related, err := s.resolveBundle(ctx, bundleMinor, x)
	if err != nil {
		return nil, err
	}
	res := &Resolution{OCP: ocp, Bundle: *bundle, Payloads: []PayloadRef{}, Content: x}
	// The relatedImages need only the bundle: they overlap with the payloads.
	sort.SliceStable(related, func(i, j int) bool { return related[i].Name < related[j].Name })
	if res.RelatedImages, err = s.relatedDigests(ctx, related); err != nil {
		return nil, err
	}
	if bundle.skew != "" {
		res.Warnings = []string{bundle.skew}
		res.Bundle.skew = ""
	}
	return res, nil
}

// bundleMinor is the LVMS minor a bundle resolution checks the CSV against: the one asked
// for, else ocp's, else none when a bundle is pinned (taken for the minor its CSV says).
func (s *Source) bundleMinor(ocp, asked string) (string, error) {
	if asked == "" && s.opts.BundleRef == "" {
		asked = ocp
	}
	if asked != "" {
		if _, err := era.ParseMinor(asked); err != nil {
			return "", fmt.Errorf("LVMS version %w", err)
		}
	}
	return asked, nil
}

// ResolvePayloads is the payload half of Resolve: the payload rule and each arch's payload
// (its digests and content, its version checked against its tag and ocp). It reads no
// bundle.
func (s *Source) ResolvePayloads(ctx context.Context, ocp string) (*Resolution, error) {
	return s.ResolvePayloadsEarly(ctx, ocp, nil)
}

// EarlyReferences hears a payload's image-references while the payload is still downloading.
type EarlyReferences func(arch string, refs *payload.ImageStream)

// ResolvePayloadsEarly is ResolvePayloads that also hands each arch's image-references to
// early as soon as it has been read — from a download, while the rest of the payload's top
// layer is still on its way (it is the layer's first file). That copy is NOT verified yet
// (the Resolution is): early may only start work that the verified result confirms, such as
// fetching the snapshot files at the commit it names. Called at most once per arch, from the
// arch's goroutine; not at all for an image-references that does not parse.
func (s *Source) ResolvePayloadsEarly(ctx context.Context, ocp string, early EarlyReferences) (*Resolution, error) {
	if _, err := era.ParseMinor(ocp); err != nil {
		return nil, fmt.Errorf("OpenShift version %w", err)
	}
	res := &Resolution{OCP: ocp, Payloads: []PayloadRef{}, RelatedImages: []ImageDigests{}}
	x := newContent()
	if err := s.resolvePayloads(ctx, ocp, res, x, early); err != nil {
		return nil, err
	}
	res.Content = x
	return res, nil
}

// Join is the whole resolution made of its bundle half (r, from ResolveBundle) and its
// payload half (p, from ResolvePayloads): the bundle's warnings come first, as Resolve
// reports them, and the content holds both halves'.
func (r *Resolution) Join(p *Resolution) *Resolution {
	out := *r
	out.Payloads, out.PayloadRule = p.Payloads, p.PayloadRule
	out.Warnings = append(slices.Clone(r.Warnings), p.Warnings...)
	x := newContent()
	if r.Content != nil {
		x.Bundle, x.BundleStats = r.Content.Bundle, r.Content.BundleStats
	}
	if p.Content != nil {
		x.Payloads, x.PayloadStats = p.Content.Payloads, p.Content.PayloadStats
	}
	out.Content = x
	return &out
}

func (s *Source) resolveBundle(ctx context.Context, minor string, x *Content) (*BundleRef, []relatedImage, error) {
	ref := s.opts.BundleRef
	version := ""
	if ref == "" {
		var err error
		if ref, version, err = s.NewestBundle(ctx, minor); err != nil {
			return nil, nil, err
		}
	}
	tag, err := fetch.TagOf(ref)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle: %w", err)
	}
	if version == "" {
		version = tag
	}
	digest, err := s.client.Digest(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	b := &BundleRef{Ref: ref, Digest: digest, Version: version}
	loaded, st, err := s.loadBundle(ctx, *b)
	if err != nil {
		return nil, nil, err
	}
	x.Bundle, x.BundleStats = loaded, *st
	b.CSVVersion = loaded.Version
	if b.Version == "" {
		b.Version = loaded.Version
	}
	v, err := semver.NewVersion(loaded.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle %s: CSV %s spec.version %q: %w", ref, loaded.CSVFile, loaded.Version, err)
	}
	if got := fmt.Sprintf("%d.%d", v.Major(), v.Minor()); minor != "" && got != minor {
		msg := fmt.Sprintf("bundle %s: CSV %s spec.version %s is LVMS %s, want %s", ref, loaded.CSVFile, loaded.Version, got, minor)
		if !s.opts.AllowVersionSkew {
			return nil, nil, fmt.Errorf("%s (%s to proceed)", msg, option.AllowVersionSkew)
		}
		s.log.Warn(msg)
		b.skew = msg
	}
	var related []relatedImage
	for _, ri := range loaded.CSV.Spec.RelatedImages {
		related = append(related, relatedImage{Name: ri.Name, Image: ri.Image})
	}
	return b, related, nil
}

func (s *Source) resolvePayloads(ctx context.Context, ocp string, res *Resolution, x *Content, early EarlyReferences) error {
	refs := map[string]string{}
	if len(s.opts.ReleaseRefs) > 0 {
		res.PayloadRule = "pinned"
		var missing []string
		for _, a := range s.arches {
			if p := s.opts.ReleaseRefs[a]; p != "" {
				refs[a] = p
			} else {
				missing = append(missing, a)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("payload pinned for some arches but not for %s (pin every arch, or use a {arch} placeholder)", strings.Join(missing, ", "))
		}
	} else {
		res.PayloadRule = "newest"
		v, warning, err := s.NewestPayload(ctx, ocp)
		if err != nil {
			return err
		}
		if warning != "" {
			s.log.Warn(warning)
			res.Warnings = append(res.Warnings, warning)
		}
		for _, a := range s.arches {
			refs[a] = s.opts.ReleaseRepo + ":" + v + "-" + a
		}
	}
	payloads := make([]PayloadRef, len(s.arches))
	errs := make([]error, len(s.arches))
	var g errgroup.Group // no cancellation: the first arch's own error is reported
	for i, a := range s.arches {
		g.Go(func() error {
			p, err := s.resolvePayload(ctx, a, refs[a], ocp, x, early)
			if err == nil {
				payloads[i] = *p
			}
			errs[i] = err
			return nil
		})
	}
	_ = g.Wait()
	if err := fetch.FirstError(ctx, errs...); err != nil {
		return err
	}
	res.Payloads = append(res.Payloads, payloads...)
	return s.checkPayloadSkew(res)
}

// checkPayloadSkew refuses GA payloads of different versions across arches (a tree whose
// arches disagree) unless --allow-version-skew. Nightlies are exempt: MicroShift pairs an
// x86_64 and an arm64 nightly whose version strings always differ.
func (s *Source) checkPayloadSkew(res *Resolution) error {
	var ga []string
	versions := map[string]bool{}
	for _, p := range res.Payloads {
		v, err := semver.NewVersion(p.Version)
		if err != nil || v.Prerelease() != "" {
			continue
		}
		ga = append(ga, p.Arch+" "+p.Version)
		versions[p.Version] = true
	}
	if len(versions) < 2 {
		return nil
	}
	msg := "pinned GA payloads differ in version across arches: " + strings.Join(ga, ", ")
	if !s.opts.AllowVersionSkew {
		return fmt.Errorf("%s (pin the same z for every arch, or %s)", msg, option.AllowVersionSkew)
	}
	s.log.Warn(msg)
	res.Warnings = append(res.Warnings, msg)
	return nil
}

// BundleMinors lists the LVMS minors with at least one valid vX.Y.Z[-N] bundle tag in the
// bundle repository: what is published, for the LVMS-minor policy (era.Choose).
func (s *Source) BundleMinors(ctx context.Context) ([]string, error) {
	have, err := s.client.ListTags(ctx, s.opts.BundleRepo)
	if err != nil {
		return nil, err
	}
	return tags.BundleMinors(have), nil
}

func (s *Source) resolvePayload(ctx context.Context, arch, ref, ocp string, x *Content, early EarlyReferences) (*PayloadRef, error) {
	tag, err := fetch.TagOf(ref)
	if err != nil {
		return nil, fmt.Errorf("payload for %s: %w", arch, err)
	}
	// One pass: manifest, then config and top layer together, then extraction; the
	// single-arch digest comes out of the same fetch.
	loaded, st, img, err := s.loadPayload(ctx, PayloadRef{Arch: arch, Ref: ref}, early)
	if err != nil {
		return nil, err
	}
	x.setPayload(arch, loaded, st)
	version := loaded.Version()
	p := &PayloadRef{Arch: arch, Ref: ref, Digest: img.Digest, ListDigest: img.ListDigest, Version: version}
	// The tag, minus its -<arch> suffix, must be the version the payload says it is.
	if want := tags.PayloadVersion(tag, arch); want != "" && want != version {
		return nil, &MismatchError{Msg: fmt.Sprintf("payload %s (%s): release-metadata version %s does not match tag %s", ref, arch, version, tag)}
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return nil, fmt.Errorf("payload %s (%s): release-metadata version %q: %w", ref, arch, version, err)
	}
	if got := fmt.Sprintf("%d.%d", v.Major(), v.Minor()); got != ocp {
		return nil, &MismatchError{Msg: fmt.Sprintf("payload %s (%s): release-metadata version %s is OpenShift %s, want %s", ref, arch, version, got, ocp)}
	}
	return p, nil
}

// MismatchError is a payload whose content contradicts what it was asked for: its
// release-metadata version is not its tag's, or not of the OpenShift minor requested. For a
// run pinned by a lock file (--check) it means the lock's pins do not belong together.
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }

type relatedImage struct {
	Name  string
	Image string
}

// NewestBundle returns the reference and tag of the newest bundle of an LVMS minor: what a
// run resolves, from the bundle repository's tag list alone (listed once per Source).
func (s *Source) NewestBundle(ctx context.Context, minor string) (ref, tag string, err error) {
	have, err := s.client.ListTags(ctx, s.opts.BundleRepo)
	if err != nil {
		return "", "", err
	}
	if tag, err = tags.PickBundle(have, minor, s.opts.BundleRepo); err != nil {
		return "", "", err
	}
	return s.opts.BundleRepo + ":" + tag, tag, nil
}

// NewestPayload returns the payload version a run with the "newest" rule takes for ocp (the
// newest GA z published for every arch of the Source) and its warning, from the release
// repository's tag list alone.
func (s *Source) NewestPayload(ctx context.Context, ocp string) (version, warning string, err error) {
	have, err := s.client.ListTags(ctx, s.opts.ReleaseRepo)
	if err != nil {
		return "", "", err
	}
	return tags.PickPayload(have, ocp, s.arches, s.opts.AllowPrerelease, s.opts.ReleaseRepo)
}

package source

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
)

// ListTags lists a repository's tags (every page), from the cache's record when offline.
func (s *Source) ListTags(ctx context.Context, repository string) ([]string, error) {
	r, err := parseRepo(repository)
	if err != nil {
		return nil, err
	}
	return s.listTags(ctx, r)
}

func (s *Source) listTags(ctx context.Context, r imgRef) ([]string, error) {
	if r.oci {
		l, err := s.layout(r.repo)
		if err != nil {
			return nil, err
		}
		return l.tags(), nil
	}
	if s.opts.Offline {
		rec, err := s.cache.readTags(r.repo)
		if err != nil {
			return nil, err
		}
		if len(rec.Tags) == 0 {
			return nil, fmt.Errorf("tags of %s are not in the cache %s (offline)", r.repo, s.cache.dir)
		}
		return rec.Tags, nil
	}
	loc := rewriteRepo(s.opts.Mirrors, r.repo)
	repo, err := name.NewRepository(loc, s.nameOpts(loc)...)
	if err != nil {
		return nil, err
	}
	// One listing per repository and run: choosing the LVMS minor and resolving the bundle
	// both read the bundle repository's tags, and so do the branches of a multi-branch run,
	// which may ask at the same time (the first lists, the others wait for its answer).
	v, _ := s.tagLists.LoadOrStore(loc, &tagList{})
	tl := v.(*tagList)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.done {
		return slices.Clone(tl.tags), nil
	}
	var tags []string
	err = s.attempt(ctx, "listing tags of "+loc, func() error {
		t, err := s.listAllTags(ctx, repo)
		tags = t
		return err
	})
	if err != nil {
		return nil, s.explain(err, "listing tags of "+r.repo, loc)
	}
	sort.Strings(tags)
	tl.tags, tl.done = slices.Clone(tags), true
	if err := s.cache.updateTags(r.repo, func(t *tagRecord) { t.Tags = tags }); err != nil {
		s.log.Warn("cannot record tags in cache", "repo", r.repo, "error", err)
	}
	return tags, nil
}

// tagList is one repository's memoised listing; a failed listing is retried by the next
// caller.
type tagList struct {
	mu   sync.Mutex
	done bool
	tags []string
}

// unknownTag explains a 404 on a tag with the nearest existing tags.
func (s *Source) unknownTag(ctx context.Context, r imgRef, cause error) error {
	tags, err := s.listTags(ctx, imgRef{canonical: r.repo, repo: r.repo})
	if err != nil || len(tags) == 0 {
		return fmt.Errorf("%s: tag %q not found: %w", r, r.tag, cause)
	}
	return fmt.Errorf("%s: tag %q not found; nearest tags: %s", r, r.tag, strings.Join(nearest(r.tag, tags, 5), ", "))
}

// nearest returns up to n tags closest to want by edit distance (ties: lexical order).
func nearest(want string, tags []string, n int) []string {
	type scored struct {
		tag string
		d   int
	}
	all := make([]scored, len(tags))
	for i, t := range tags {
		all[i] = scored{t, levenshtein(want, t)}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].tag < all[j].tag
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].tag)
	}
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var (
	bundleTagRE  = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(?:-(\d{1,3}))?$`)
	payloadTagRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(-(?:rc|ec)\.\d+)?-([a-z0-9_]+)$`)
)

type bundleTag struct {
	tag   string
	v     *semver.Version
	build int // -1 when the tag has no -N
}

// PickBundleTag returns the newest vX.Y.Z[-N] tag of minor: newest version, then the highest
// build number (numeric). With no tag for the minor, the error lists the minors that exist.
func PickBundleTag(tags []string, minor, repo string) (string, error) {
	var cands []bundleTag
	minors := map[string]bool{}
	for _, t := range tags {
		m := bundleTagRE.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		minors[m[1]+"."+m[2]] = true
		if m[1]+"."+m[2] != minor {
			continue
		}
		v, err := semver.NewVersion(m[1] + "." + m[2] + "." + m[3])
		if err != nil {
			continue
		}
		b := -1
		if m[4] != "" {
			b, _ = strconv.Atoi(m[4])
		}
		cands = append(cands, bundleTag{t, v, b})
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("no bundle tag vX.Y.Z[-N] for %s in %s; minors with tags: %s", minor, repo, listMinors(minors))
	}
	sort.Slice(cands, func(i, j int) bool {
		if c := cands[i].v.Compare(cands[j].v); c != 0 {
			return c > 0
		}
		if cands[i].build != cands[j].build {
			return cands[i].build > cands[j].build
		}
		// v4.17.3-10 and v4.17.3-010 are the same build: pick the canonical spelling (then
		// lexical order) so the answer does not depend on the registry's tag order.
		if len(cands[i].tag) != len(cands[j].tag) {
			return len(cands[i].tag) < len(cands[j].tag)
		}
		return cands[i].tag < cands[j].tag
	})
	return cands[0].tag, nil
}

func listMinors(m map[string]bool) string {
	if len(m) == 0 {
		return "none"
	}
	var vs []*semver.Version
	for k := range m {
		if v, err := semver.NewVersion(k); err == nil {
			vs = append(vs, v)
		}
	}
	sort.Sort(semver.Collection(vs))
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%d.%d", v.Major(), v.Minor())
	}
	return strings.Join(out, ", ")
}

// PickPayloadVersion returns the newest X.Y.Z (GA unless allowPrerelease) of minor that has a
// tag for every arch, and a warning when a newer one exists for only some arches. It fails
// only when no version is common to every arch.
func PickPayloadVersion(tags []string, minor string, arches []string, allowPrerelease bool, repo string) (string, string, error) {
	wanted := map[string]bool{}
	for _, a := range arches {
		wanted[a] = true
	}
	byArch := map[string]map[string]*semver.Version{}
	minors := map[string]bool{}
	var all []*semver.Version
	seen := map[string]bool{}
	// What the minor does have, to explain an empty answer: tags for other arch suffixes
	// (a -multi-only minor) and pre-release tags skipped without --allow-prerelease.
	otherArches := map[string]bool{}
	var skippedPre []string
	for _, t := range tags {
		m := payloadTagRE.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		minors[m[1]+"."+m[2]] = true
		if m[1]+"."+m[2] != minor {
			continue
		}
		if !wanted[m[5]] {
			otherArches[m[5]] = true
			continue
		}
		if m[4] != "" && !allowPrerelease {
			skippedPre = append(skippedPre, t)
			continue
		}
		vs := m[1] + "." + m[2] + "." + m[3] + m[4]
		v, err := semver.NewVersion(vs)
		if err != nil {
			continue
		}
		if byArch[m[5]] == nil {
			byArch[m[5]] = map[string]*semver.Version{}
		}
		byArch[m[5]][vs] = v
		if !seen[vs] {
			seen[vs] = true
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		kind := "GA "
		if allowPrerelease {
			kind = ""
		}
		hint := ""
		if len(skippedPre) > 0 {
			sort.Strings(skippedPre)
			hint += fmt.Sprintf("; %s has only pre-release tags for %s (e.g. %s): pass %s", minor, strings.Join(arches, ", "), skippedPre[len(skippedPre)-1], option.AllowPrerelease)
		}
		if len(otherArches) > 0 {
			hint += fmt.Sprintf("; %s has tags for %s only: pin one with %s %s:X.Y.Z-<suffix>", minor, strings.Join(slices.Sorted(maps.Keys(otherArches)), ", "), option.OCPRelease, repo)
		}
		return "", "", fmt.Errorf("no %spayload tag X.Y.Z-<arch> for %s (arches %s) in %s%s; minors with tags: %s", kind, minor, strings.Join(arches, ", "), repo, hint, listMinors(minors))
	}
	return newestCommon(byArch, all, arches, minor, repo)
}

// newestCommon picks the newest version published for every arch. A newer version published
// for only some arches gives a warning; no common version at all is an error naming each
// arch's newest.
func newestCommon(byArch map[string]map[string]*semver.Version, all []*semver.Version, arches []string, minor, repo string) (string, string, error) {
	sort.Sort(sort.Reverse(semver.Collection(all)))
	for i, v := range all {
		var lacking []string
		for _, a := range arches {
			if _, ok := byArch[a][v.Original()]; !ok {
				lacking = append(lacking, a)
			}
		}
		if len(lacking) > 0 {
			continue
		}
		if i == 0 {
			return v.Original(), "", nil
		}
		var newer []string
		for _, n := range all[:i] {
			var has []string
			for _, a := range arches {
				if _, ok := byArch[a][n.Original()]; ok {
					has = append(has, a)
				}
			}
			newer = append(newer, fmt.Sprintf("%s (%s only)", n.Original(), strings.Join(has, ", ")))
		}
		return v.Original(), fmt.Sprintf("newer payloads of %s are not published for every arch in %s: %s; using %s, the newest z published for %s",
			minor, repo, strings.Join(newer, ", "), v.Original(), strings.Join(arches, " and ")), nil
	}
	var per []string
	for _, a := range arches {
		best := "none"
		var have []*semver.Version
		for _, v := range byArch[a] {
			have = append(have, v)
		}
		if len(have) > 0 {
			sort.Sort(sort.Reverse(semver.Collection(have)))
			best = have[0].Original()
		}
		per = append(per, fmt.Sprintf("newest %s: %s", a, best))
	}
	return "", "", fmt.Errorf("no payload of %s is published for every arch (%s) in %s: %s; pin one per arch with %s",
		minor, strings.Join(arches, ", "), repo, strings.Join(per, "; "), option.For(option.OCPRelease, "<arch>"))
}

// Resolve picks the bundle and per-arch payloads for OpenShift minor ocp (X.Y). bundleMinor
// is the LVMS minor to look for (empty: ocp). Pins in Options skip the matching resolution.
// It checks the CSV's spec.version minor (bundleMinor) and each payload's release-metadata
// version (equal to the tag, minor ocp), and resolves every relatedImage per arch.
func (s *Source) Resolve(ctx context.Context, ocp, bundleMinor string) (*Resolution, error) {
	return s.ResolveIn(ctx, ocp, bundleMinor, "")
}

// ResolveIn is Resolve keeping what it extracts: the bundle under workDir/bundle and each
// payload's release-manifests/ under workDir/payload-<arch>, described by
// Resolution.Extracted, so the fetch phases need not extract them again. The bundle and
// the payloads resolve in parallel, as do the arches and the relatedImages (bounded by
// Options.Concurrency); errors are reported in a fixed order (bundle, then payloads by arch).
func (s *Source) ResolveIn(ctx context.Context, ocp, bundleMinor, workDir string) (*Resolution, error) {
	if _, err := era.ParseMinor(ocp); err != nil {
		return nil, fmt.Errorf("OpenShift version %w", err)
	}
	// A pinned bundle without a wanted minor is taken for the minor its CSV says.
	if bundleMinor == "" && s.opts.BundleRef == "" {
		bundleMinor = ocp
	}
	if bundleMinor != "" {
		if _, err := era.ParseMinor(bundleMinor); err != nil {
			return nil, fmt.Errorf("LVMS version %w", err)
		}
	}
	res := &Resolution{OCP: ocp, Payloads: []PayloadRef{}, RelatedImages: []ImageDigests{}}
	x := newExtracted(workDir)
	var (
		bundle           *BundleRef
		related          []relatedImage
		bundleErr, plErr error
	)
	// Neither branch cancels the other: each error is then a real one, and the bundle's is
	// reported first, whatever finished first. They write disjoint fields of res.
	var g errgroup.Group
	g.Go(func() error {
		if bundle, related, bundleErr = s.resolveBundle(ctx, bundleMinor, x); bundleErr != nil {
			return nil
		}
		// The relatedImages need only the bundle: they overlap with the payloads.
		sort.SliceStable(related, func(i, j int) bool { return related[i].Name < related[j].Name })
		res.RelatedImages, bundleErr = s.relatedDigests(ctx, related)
		return nil
	})
	g.Go(func() error {
		plErr = s.resolvePayloads(ctx, ocp, res, x)
		return nil
	})
	_ = g.Wait()
	if err := firstError(ctx, bundleErr, plErr); err != nil {
		return nil, err
	}
	if bundle.skew != "" {
		res.Warnings = append([]string{bundle.skew}, res.Warnings...)
		bundle.skew = ""
	}
	res.Bundle = *bundle
	if workDir != "" {
		res.Extracted = x
	}
	return res, nil
}

func (s *Source) resolveBundle(ctx context.Context, minor string, x *Extracted) (*BundleRef, []relatedImage, error) {
	ref := s.opts.BundleRef
	version := ""
	if ref == "" {
		repo, err := parseRepo(s.opts.BundleRepo)
		if err != nil {
			return nil, nil, err
		}
		tags, err := s.listTags(ctx, repo)
		if err != nil {
			return nil, nil, err
		}
		tag, err := PickBundleTag(tags, minor, repo.canonical)
		if err != nil {
			return nil, nil, err
		}
		ref, version = tagRef(repo, tag), tag
	}
	r, err := parseRef(ref)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle: %w", err)
	}
	if version == "" {
		version = r.tag
	}
	m, err := s.getManifest(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	b := &BundleRef{Ref: ref, Digest: m.digest.String(), Version: version}
	dir, cleanup, err := x.dir("bundle")
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	st, err := s.FetchBundle(ctx, *b, dir)
	if err != nil {
		return nil, nil, err
	}
	x.setBundle(dir, st)
	csv, err := readCSV(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle %s: %w", ref, err)
	}
	b.CSVVersion = csv.version
	if b.Version == "" {
		b.Version = csv.version
	}
	v, err := semver.NewVersion(csv.version)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle %s: CSV %s spec.version %q: %w", ref, csv.file, csv.version, err)
	}
	if got := fmt.Sprintf("%d.%d", v.Major(), v.Minor()); minor != "" && got != minor {
		msg := fmt.Sprintf("bundle %s: CSV %s spec.version %s is LVMS %s, want %s", ref, csv.file, csv.version, got, minor)
		if !s.opts.AllowVersionSkew {
			return nil, nil, fmt.Errorf("%s (%s to proceed)", msg, option.AllowVersionSkew)
		}
		s.log.Warn(msg)
		b.skew = msg
	}
	return b, csv.related, nil
}

func (s *Source) resolvePayloads(ctx context.Context, ocp string, res *Resolution, x *Extracted) error {
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
		repo, err := parseRepo(s.opts.ReleaseRepo)
		if err != nil {
			return err
		}
		tags, err := s.listTags(ctx, repo)
		if err != nil {
			return err
		}
		v, warning, err := PickPayloadVersion(tags, ocp, s.arches, s.opts.AllowPrerelease, repo.canonical)
		if err != nil {
			return err
		}
		if warning != "" {
			s.log.Warn(warning)
			res.Warnings = append(res.Warnings, warning)
		}
		for _, a := range s.arches {
			refs[a] = tagRef(repo, v+"-"+a)
		}
	}
	payloads := make([]PayloadRef, len(s.arches))
	errs := make([]error, len(s.arches))
	var g errgroup.Group // no cancellation: the first arch's own error is reported
	for i, a := range s.arches {
		g.Go(func() error {
			p, err := s.resolvePayload(ctx, a, refs[a], ocp, x)
			if err == nil {
				payloads[i] = *p
			}
			errs[i] = err
			return nil
		})
	}
	_ = g.Wait()
	if err := firstError(ctx, errs...); err != nil {
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
	repo, err := parseRepo(s.opts.BundleRepo)
	if err != nil {
		return nil, err
	}
	tags, err := s.listTags(ctx, repo)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		if m := bundleTagRE.FindStringSubmatch(t); m != nil && !seen[m[1]+"."+m[2]] {
			seen[m[1]+"."+m[2]] = true
			out = append(out, m[1]+"."+m[2])
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *Source) resolvePayload(ctx context.Context, arch, ref, ocp string, x *Extracted) (*PayloadRef, error) {
	r, err := parseRef(ref)
	if err != nil {
		return nil, fmt.Errorf("payload for %s: %w", arch, err)
	}
	dir, cleanup, err := x.dir("payload-" + arch)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// One pass: manifest, then config and top layer together, then extraction; the
	// single-arch digest comes out of the same fetch.
	st, img, err := s.fetchPayload(ctx, PayloadRef{Arch: arch, Ref: ref}, dir)
	if err != nil {
		return nil, fmt.Errorf("payload for %s: %w", arch, err)
	}
	x.setPayload(arch, dir, st)
	p := &PayloadRef{Arch: arch, Ref: ref, Digest: img.digest, ListDigest: img.listDigest}
	version, err := readReleaseVersion(filepath.Join(dir, filepath.FromSlash(ReleaseMetadataFile)))
	if err != nil {
		return nil, fmt.Errorf("payload %s (%s): %w", ref, arch, err)
	}
	p.Version = version
	// The tag, minus its -<arch> suffix, must be the version the payload says it is.
	if r.tag != "" {
		want := strings.TrimSuffix(strings.TrimSuffix(r.tag, "-"+arch), "-multi")
		if _, err := semver.NewVersion(want); err == nil && want != version {
			return nil, &MismatchError{Msg: fmt.Sprintf("payload %s (%s): release-metadata version %s does not match tag %s", ref, arch, version, r.tag)}
		}
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

type csvInfo struct {
	file    string
	version string
	related []relatedImage
}

// readCSV loads the unpacked bundle with rebase/bundle (the CSV is found by kind).
func readCSV(dir string) (*csvInfo, error) {
	b, err := bundle.Load(dir)
	if err != nil {
		return nil, err
	}
	info := &csvInfo{file: b.CSVFile, version: b.Version}
	for _, ri := range b.CSV.Spec.RelatedImages {
		info.related = append(info.related, relatedImage{Name: ri.Name, Image: ri.Image})
	}
	return info, nil
}

// readReleaseVersion reads release-metadata's version with rebase/payload's decoder.
func readReleaseVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	md, err := payload.ParseMetadata(b)
	if err != nil {
		return "", err
	}
	return md.Version, nil
}

// NewestBundle returns the reference and tag of the newest bundle of an LVMS minor: what a
// run resolves, from the bundle repository's tag list alone (listed once per Source).
func (s *Source) NewestBundle(ctx context.Context, minor string) (ref, tag string, err error) {
	repo, err := parseRepo(s.opts.BundleRepo)
	if err != nil {
		return "", "", err
	}
	tags, err := s.listTags(ctx, repo)
	if err != nil {
		return "", "", err
	}
	if tag, err = PickBundleTag(tags, minor, repo.canonical); err != nil {
		return "", "", err
	}
	return tagRef(repo, tag), tag, nil
}

// NewestPayload returns the payload version a run with the "newest" rule takes for ocp (the
// newest GA z published for every arch of the Source) and its warning, from the release
// repository's tag list alone.
func (s *Source) NewestPayload(ctx context.Context, ocp string) (version, warning string, err error) {
	repo, err := parseRepo(s.opts.ReleaseRepo)
	if err != nil {
		return "", "", err
	}
	tags, err := s.listTags(ctx, repo)
	if err != nil {
		return "", "", err
	}
	return PickPayloadVersion(tags, ocp, s.arches, s.opts.AllowPrerelease, repo.canonical)
}

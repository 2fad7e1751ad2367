// Package tags is the tag policy of lvms-rebase: which bundle tag (vX.Y.Z[-N]) and which
// payload version (X.Y.Z-<arch>, GA unless pre-releases are allowed, common to every arch)
// a run takes from a repository's tag list, and the nearest tags to a missing one. It reads
// tag names only; listing them is the fetch package's job.
package tags

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// Nearest returns up to n tags closest to want by edit distance (ties: lexical order).
func Nearest(want string, tags []string, n int) []string {
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

// PickBundle returns the newest vX.Y.Z[-N] tag of minor: newest version, then the highest
// build number (numeric). With no tag for the minor, the error lists the minors that exist.
func PickBundle(tags []string, minor, repo string) (string, error) {
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

// PickPayload returns the newest X.Y.Z (GA unless allowPrerelease) of minor that has a
// tag for every arch, and a warning when a newer one exists for only some arches. It fails
// only when no version is common to every arch.
func PickPayload(tags []string, minor string, arches []string, allowPrerelease bool, repo string) (string, string, error) {
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

// BundleMinors lists the LVMS minors with at least one valid vX.Y.Z[-N] bundle tag, sorted.
func BundleMinors(tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		if m := bundleTagRE.FindStringSubmatch(t); m != nil && !seen[m[1]+"."+m[2]] {
			seen[m[1]+"."+m[2]] = true
			out = append(out, m[1]+"."+m[2])
		}
	}
	sort.Strings(out)
	return out
}

// PayloadVersion is the version a payload tag of arch names: the tag without its -<arch>
// or -multi suffix ("4.18.10-x86_64" → "4.18.10"; a nightly's tag is its version), or ""
// when what is left is no exact X.Y.Z[-pre] version ("latest", "4.18"), which only the
// payload's release-metadata can tell.
func PayloadVersion(tag, arch string) string {
	v := strings.TrimSuffix(strings.TrimSuffix(tag, "-"+arch), "-multi")
	if _, err := semver.StrictNewVersion(v); err != nil {
		return ""
	}
	return v
}

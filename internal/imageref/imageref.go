// Package imageref finds container image references inside arbitrary strings (an env value,
// a `--flag=<ref>` argument, a JSON annotation) and walks every string of a decoded object
// with its field path. The bundle translation templates what it finds; render refuses a
// shipped file in which a pinned reference survives untemplated.
package imageref

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The grammar is the one of distribution's reference package (docker/distribution
// reference/regexp.go), restricted to references that name their registry: a reference
// without a registry host cannot be told from a path.
const (
	alnum           = `[a-z0-9]+`
	separator       = `(?:[._]|__|[-]+)`
	pathComponent   = alnum + `(?:` + separator + alnum + `)*`
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domain          = `(?:` + domainComponent + `(?:\.` + domainComponent + `)+(?::[0-9]+)?|localhost(?::[0-9]+)?|` + domainComponent + `:[0-9]+)`
	tag             = `:[\w][\w.-]{0,127}`
	digest          = `@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
)

var refRE = regexp.MustCompile(`(` + domain + `(?:/` + pathComponent + `)+)(` + tag + `)?(` + digest + `)?`)

// Ref is one image reference found in a string.
type Ref struct {
	// Start and End are byte offsets of the reference in the string.
	Start, End int
	// Ref is the whole reference ("quay.io/a/b:v1@sha256:…").
	Ref string
	// Repository is the name without tag and digest; Tag is without ':', Digest with its
	// algorithm ("sha256:…"). At least one of Tag and Digest is set.
	Repository, Tag, Digest string
}

// Find returns the references in s that are pinned by a tag or a digest, in order. A
// registry path inside a URL (https://quay.io/…) is not a reference.
func Find(s string) []Ref {
	var out []Ref
	for _, m := range refRE.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[0], m[1]
		if m[4] < 0 && m[6] < 0 {
			continue // neither tag nor digest: a path or a host name, not a pinned image
		}
		if start > 0 && strings.ContainsRune("/:.-_@", rune(s[start-1])) {
			continue // part of a URL or of a longer name
		}
		if end < len(s) && s[end] == '/' {
			continue
		}
		r := Ref{Start: start, End: end, Ref: s[start:end], Repository: s[m[2]:m[3]]}
		if m[4] >= 0 {
			r.Tag = s[m[4]+1 : m[5]]
		}
		if m[6] >= 0 {
			r.Digest = s[m[6]+1 : m[7]]
		}
		out = append(out, r)
	}
	return out
}

// DigestOf returns the digest of a reference ("repo@sha256:…" → "sha256:…"), or "".
func DigestOf(ref string) string {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[i+1:]
	}
	return ""
}

// Replace returns s with every pinned reference for which lookup answers true replaced by
// what it returns, and the references it left alone.
func Replace(s string, lookup func(Ref) (string, bool)) (string, []Ref) {
	refs := Find(s)
	if len(refs) == 0 {
		return s, nil
	}
	var b strings.Builder
	var kept []Ref
	last := 0
	for _, r := range refs {
		with, ok := lookup(r)
		if !ok {
			kept = append(kept, r)
			continue
		}
		b.WriteString(s[last:r.Start])
		b.WriteString(with)
		last = r.End
	}
	b.WriteString(s[last:])
	return b.String(), kept
}

// Strings calls f with the field path and value of every string in v (a decoded JSON or
// YAML value: maps, slices, scalars), in a fixed order (map keys sorted). The string
// f returns replaces the value. Paths read as kubectl's JSONPath without the braces:
// spec.template.spec.containers[0].env[2].value, metadata.annotations['a.io/b'].
func Strings(v any, f func(path, s string) string) any {
	return walk(v, "", f)
}

func walk(v any, path string, f func(path, s string) string) any {
	switch x := v.(type) {
	case string:
		return f(path, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x[k] = walk(x[k], fieldPath(path, k), f)
		}
		return x
	case []any:
		for i := range x {
			x[i] = walk(x[i], fmt.Sprintf("%s[%d]", path, i), f)
		}
		return x
	}
	return v
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func fieldPath(parent, key string) string {
	if !plainKey.MatchString(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

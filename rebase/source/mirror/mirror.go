// Package mirror is where lvms-rebase may pull an image from instead of its canonical
// location: SRC=DST prefix rewrites (applied to every pull) and ImageDigestMirrorSet /
// ImageContentSourcePolicy rules (digest pulls only, as with oc --idms-file). Outputs
// always record canonical references; mirrors only change where bytes come from.
package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// Mirror is one --mirror SRC=DST prefix rewrite.
type Mirror struct {
	// Source is the canonical prefix (host or host/path) being replaced.
	Source string
	// Mirror is what replaces it.
	Mirror string
}

// String renders the flag form SRC=DST.
func (m Mirror) String() string { return m.Source + "=" + m.Mirror }

// mirrorSpec formats a --mirror value for a message, each side through redact.URL.
func mirrorSpec(s string) string {
	src, dst, ok := strings.Cut(s, "=")
	if !ok {
		return redact.URL(s)
	}
	return redact.URL(src) + "=" + redact.URL(dst)
}

// Parse parses SRC=DST; each side is a registry location (see checkLocation).
func Parse(s string) (Mirror, error) {
	src, dst, ok := strings.Cut(s, "=")
	src, dst = strings.TrimSuffix(strings.TrimSpace(src), "/"), strings.TrimSuffix(strings.TrimSpace(dst), "/")
	if !ok || src == "" || dst == "" {
		return Mirror{}, fmt.Errorf("mirror %q: want SRC=DST, e.g. registry.redhat.io=mirror.example.com:5000/rh", mirrorSpec(s))
	}
	for _, side := range []string{src, dst} {
		if err := checkLocation(side); err != nil {
			return Mirror{}, fmt.Errorf("mirror %q: %w", mirrorSpec(s), err)
		}
	}
	return Mirror{Source: src, Mirror: dst}, nil
}

var (
	// registryHost is HOST[:PORT] or [IPv6]:PORT.
	registryHost = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:[0-9]+)?$`)
	// repoComponent is one path component of a repository name (distribution's grammar).
	repoComponent = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
)

// checkLocation validates a mirror or mirror source: HOST[:PORT][/PATH] with a real registry
// host (without one, "mirror/x" would silently mean Docker Hub), no scheme, no user info (a
// credential does not belong on a command line or in a shared file), no tag or digest, and a
// path a registry can hold (lower case). Errors never repeat the value's credentials.
func checkLocation(loc string) error {
	switch {
	case strings.Contains(loc, "://"):
		return fmt.Errorf("%q: want HOST[:PORT][/PATH] without a scheme", redact.URL(loc))
	case strings.Contains(loc, "@"):
		return fmt.Errorf("%q: user info or a digest is not allowed (credentials go in %s)", redact.URL(loc), option.AuthFile)
	}
	host, path, hasPath := strings.Cut(loc, "/")
	if !registryHost.MatchString(host) || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		return fmt.Errorf("%q does not start with a registry host (HOST[:PORT][/PATH])", redact.URL(loc))
	}
	if !hasPath {
		return nil
	}
	for _, c := range strings.Split(path, "/") {
		if !repoComponent.MatchString(c) {
			return fmt.Errorf("%q: path component %q is not a valid repository name (lower-case letters, digits, . _ -; no tag)", redact.URL(loc), redact.URL(c))
		}
	}
	return nil
}

// prefixMatch reports whether repo (host/path, no tag) is src or lies under it.
func prefixMatch(repo, src string) bool {
	return repo == src || strings.HasPrefix(repo, src+"/")
}

// Rewrite applies the longest matching --mirror prefix to a repository name.
func Rewrite(mirrors []Mirror, repo string) string {
	best := -1
	for i, m := range mirrors {
		if prefixMatch(repo, m.Source) && (best < 0 || len(m.Source) > len(mirrors[best].Source)) {
			best = i
		}
	}
	if best < 0 {
		return repo
	}
	return mirrors[best].Mirror + strings.TrimPrefix(repo, mirrors[best].Source)
}

// Rule is one source with its mirrors from an IDMS/ICSP file.
type Rule struct {
	// Source is the repository prefix the rule applies to.
	Source string
	// Mirrors are tried in order before the source.
	Mirrors []string
	// NeverContactSource leaves the source out of the locations.
	NeverContactSource bool
}

// idmsDoc is one ImageDigestMirrorSet or ImageContentSourcePolicy. It is decoded strictly:
// a misspelt field ("mirror:") would otherwise drop mirrors without a word.
type idmsDoc struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Spec       struct {
		ImageDigestMirrors      []idmsEntry `json:"imageDigestMirrors"`
		RepositoryDigestMirrors []icspEntry `json:"repositoryDigestMirrors"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

type idmsEntry struct {
	Source             string   `json:"source"`
	Mirrors            []string `json:"mirrors"`
	MirrorSourcePolicy string   `json:"mirrorSourcePolicy"`
}

type icspEntry struct {
	Source  string   `json:"source"`
	Mirrors []string `json:"mirrors"`
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// LoadIDMS reads ImageDigestMirrorSet and/or ImageContentSourcePolicy documents (several
// may share one file, separated by ---).
func LoadIDMS(path string) ([]Rule, error) {
	data, err := safefile.ReadFile(path, safefile.Options{Follow: true})
	if err != nil {
		return nil, fmt.Errorf("reading IDMS file: %w", err)
	}
	return parseIDMS(path, data)
}

func parseIDMS(path string, data []byte) ([]Rule, error) {
	var rules []Rule
	for i, doc := range docSep.Split(string(data), -1) {
		if len(bytes.TrimSpace([]byte(doc))) == 0 {
			continue
		}
		var d idmsDoc
		if err := strictyaml.Unmarshal([]byte(doc), &d); err != nil {
			return nil, fmt.Errorf("IDMS file %s, document %d: %w", path, i+1, err)
		}
		switch d.Kind {
		case "ImageDigestMirrorSet":
			for _, m := range d.Spec.ImageDigestMirrors {
				switch m.MirrorSourcePolicy {
				case "", "AllowContactingSource", "NeverContactSource":
				default:
					return nil, fmt.Errorf("IDMS file %s, document %d: source %s: mirrorSourcePolicy %q, want AllowContactingSource or NeverContactSource",
						path, i+1, redact.URL(m.Source), m.MirrorSourcePolicy)
				}
				rules = append(rules, Rule{Source: m.Source, Mirrors: m.Mirrors, NeverContactSource: m.MirrorSourcePolicy == "NeverContactSource"})
			}
		case "ImageContentSourcePolicy":
			for _, m := range d.Spec.RepositoryDigestMirrors {
				rules = append(rules, Rule{Source: m.Source, Mirrors: m.Mirrors})
			}
		default:
			return nil, fmt.Errorf("IDMS file %s, document %d: kind %q, want ImageDigestMirrorSet or ImageContentSourcePolicy", path, i+1, d.Kind)
		}
	}
	for _, r := range rules {
		if err := checkIDMSRule(r); err != nil {
			return nil, fmt.Errorf("IDMS file %s: %w", path, err)
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("IDMS file %s: no mirrors found", path)
	}
	return rules, nil
}

// checkIDMSRule validates a source and its mirrors like --mirror values.
func checkIDMSRule(r Rule) error {
	if r.Source == "" {
		return errors.New("an entry has no source")
	}
	if err := checkLocation(r.Source); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if len(r.Mirrors) == 0 {
		return fmt.Errorf("source %s: no mirrors", redact.URL(r.Source))
	}
	for _, m := range r.Mirrors {
		if err := checkLocation(m); err != nil {
			return fmt.Errorf("source %s: mirror %w", redact.URL(r.Source), err)
		}
	}
	return nil
}

// Locations returns the repositories to try, in order, for a pull of repo. IDMS rules
// apply to digest pulls only; mirrors (--mirror rewrites) apply to every location.
func Locations(repo string, byDigest bool, rules []Rule, mirrors []Mirror) []string {
	var locs []string
	contactSource := true
	if byDigest {
		// The most specific IDMS source wins, as in containers-registries.conf.
		best := -1
		for i, r := range rules {
			if prefixMatch(repo, r.Source) && (best < 0 || len(r.Source) > len(rules[best].Source)) {
				best = i
			}
		}
		if best >= 0 {
			r := rules[best]
			for _, m := range r.Mirrors {
				locs = append(locs, m+strings.TrimPrefix(repo, r.Source))
			}
			contactSource = !r.NeverContactSource
		}
	}
	if contactSource {
		locs = append(locs, repo)
	}
	seen := map[string]bool{}
	out := locs[:0]
	for _, l := range locs {
		l = Rewrite(mirrors, l)
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

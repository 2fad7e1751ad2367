package source

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
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

// ParseMirror parses SRC=DST.
func ParseMirror(s string) (Mirror, error) {
	src, dst, ok := strings.Cut(s, "=")
	src, dst = strings.TrimSuffix(strings.TrimSpace(src), "/"), strings.TrimSuffix(strings.TrimSpace(dst), "/")
	if !ok || src == "" || dst == "" {
		return Mirror{}, fmt.Errorf("mirror %q: want SRC=DST, e.g. registry.redhat.io=mirror.example.com:5000/rh", s)
	}
	for _, side := range []string{src, dst} {
		host, _, _ := strings.Cut(side, "/")
		// Without a registry host, "mirror/x" would silently mean Docker Hub.
		if !strings.ContainsAny(host, ".:") && host != "localhost" {
			return Mirror{}, fmt.Errorf("mirror %q: %q does not start with a registry host (HOST[:PORT][/PATH])", s, side)
		}
	}
	return Mirror{Source: src, Mirror: dst}, nil
}

// prefixMatch reports whether repo (host/path, no tag) is src or lies under it.
func prefixMatch(repo, src string) bool {
	return repo == src || strings.HasPrefix(repo, src+"/")
}

// rewriteRepo applies the longest matching --mirror prefix to a repository name.
func rewriteRepo(mirrors []Mirror, repo string) string {
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

// idmsRule is one source with its mirrors from an IDMS/ICSP file.
type idmsRule struct {
	Source        string
	Mirrors       []string
	NeverContactS bool
}

type idmsDoc struct {
	Kind string `json:"kind"`
	Spec struct {
		ImageDigestMirrors []struct {
			Source             string   `json:"source"`
			Mirrors            []string `json:"mirrors"`
			MirrorSourcePolicy string   `json:"mirrorSourcePolicy"`
		} `json:"imageDigestMirrors"`
		RepositoryDigestMirrors []struct {
			Source  string   `json:"source"`
			Mirrors []string `json:"mirrors"`
		} `json:"repositoryDigestMirrors"`
	} `json:"spec"`
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// loadIDMS reads ImageDigestMirrorSet and/or ImageContentSourcePolicy documents (several
// may share one file, separated by ---).
func loadIDMS(path string) ([]idmsRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading IDMS file: %w", err)
	}
	return parseIDMS(path, data)
}

func parseIDMS(path string, data []byte) ([]idmsRule, error) {
	var rules []idmsRule
	for i, doc := range docSep.Split(string(data), -1) {
		if len(bytes.TrimSpace([]byte(doc))) == 0 {
			continue
		}
		var d idmsDoc
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			return nil, fmt.Errorf("IDMS file %s, document %d: %w", path, i+1, err)
		}
		switch d.Kind {
		case "ImageDigestMirrorSet":
			for _, m := range d.Spec.ImageDigestMirrors {
				rules = append(rules, idmsRule{Source: m.Source, Mirrors: m.Mirrors, NeverContactS: m.MirrorSourcePolicy == "NeverContactSource"})
			}
		case "ImageContentSourcePolicy":
			for _, m := range d.Spec.RepositoryDigestMirrors {
				rules = append(rules, idmsRule{Source: m.Source, Mirrors: m.Mirrors})
			}
		default:
			return nil, fmt.Errorf("IDMS file %s, document %d: kind %q, want ImageDigestMirrorSet or ImageContentSourcePolicy", path, i+1, d.Kind)
		}
	}
	for _, r := range rules {
		if r.Source == "" {
			return nil, fmt.Errorf("IDMS file %s: an entry has no source", path)
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("IDMS file %s: no mirrors found", path)
	}
	return rules, nil
}

// locations returns the repositories to try, in order, for a pull of repo. IDMS mirrors
// apply to digest pulls only; --mirror rewrites apply to every location.
func (s *Source) locations(repo string, byDigest bool) []string {
	var locs []string
	contactSource := true
	if byDigest {
		// The most specific IDMS source wins, as in containers-registries.conf.
		best := -1
		for i, r := range s.idms {
			if prefixMatch(repo, r.Source) && (best < 0 || len(r.Source) > len(s.idms[best].Source)) {
				best = i
			}
		}
		if best >= 0 {
			r := s.idms[best]
			for _, m := range r.Mirrors {
				locs = append(locs, m+strings.TrimPrefix(repo, r.Source))
			}
			contactSource = !r.NeverContactS
		}
	}
	if contactSource {
		locs = append(locs, repo)
	}
	seen := map[string]bool{}
	out := locs[:0]
	for _, l := range locs {
		l = rewriteRepo(s.opts.Mirrors, l)
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

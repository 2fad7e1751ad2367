package fetch

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

const ociPrefix = "oci:"

// imgRef is a parsed image reference: a registry repository or an OCI layout directory,
// with a tag and/or digest.
type imgRef struct {
	canonical string // as given, recorded in outputs
	repo      string // host/path, or the layout directory for oci
	tag       string
	digest    string // sha256:… when pinned by digest
	oci       bool
}

func (r imgRef) String() string { return r.canonical }

// withDigest returns the same image addressed by digest d.
func (r imgRef) withDigest(d string) imgRef {
	r.digest = d
	return r
}

// parseRef parses a registry reference or oci:PATH[:TAG|@DIGEST].
func parseRef(s string) (imgRef, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, ociPrefix) {
		rest := strings.TrimPrefix(s, ociPrefix)
		r := imgRef{canonical: s, oci: true}
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			r.digest = rest[i+1:]
			rest = rest[:i]
			if _, err := v1.NewHash(r.digest); err != nil {
				return imgRef{}, fmt.Errorf("reference %q: bad digest: %w", redact.URL(s), err)
			}
		} else if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
			r.tag = rest[i+1:]
			rest = rest[:i]
		}
		if rest == "" {
			return imgRef{}, fmt.Errorf("reference %q: want oci:PATH[:TAG|@DIGEST]", redact.URL(s))
		}
		r.repo = rest
		return r, nil
	}
	ref, err := name.ParseReference(s, name.WithDefaultTag(""))
	if err != nil {
		return imgRef{}, badName("reference", s, err)
	}
	r := imgRef{canonical: s, repo: ref.Context().Name()}
	switch v := ref.(type) {
	case name.Digest:
		r.digest = v.DigestStr()
		// "repo:tag@digest" keeps the tag for display; the digest decides.
		if at := strings.LastIndex(s, "@"); at >= 0 {
			head := s[:at]
			if c := strings.LastIndex(head, ":"); c > strings.LastIndex(head, "/") {
				r.tag = head[c+1:]
			}
		}
	case name.Tag:
		r.tag = v.TagStr()
	}
	if r.tag == "" && r.digest == "" {
		return imgRef{}, fmt.Errorf("reference %q: want a tag or a digest", redact.URL(s))
	}
	return r, nil
}

// badName explains a reference or repository ggcr's name package rejected. Its errors quote
// the whole value, so a value carrying credentials gets a plain statement instead.
func badName(kind, s string, err error) error {
	if red := redact.URL(s); red != s {
		return fmt.Errorf("%s %q is not a valid image %s (user info, query or fragment are not part of one; credentials go in the auth file)", kind, red, kind)
	}
	return fmt.Errorf("%s %q: %w", kind, s, err)
}

// parseRepo parses a repository (for tag listing): host/path or oci:PATH.
func parseRepo(s string) (imgRef, error) {
	if strings.HasPrefix(s, ociPrefix) {
		return imgRef{canonical: s, repo: strings.TrimPrefix(s, ociPrefix), oci: true}, nil
	}
	repo, err := name.NewRepository(s)
	if err != nil {
		return imgRef{}, badName("repository", s, err)
	}
	return imgRef{canonical: s, repo: repo.Name()}, nil
}

// ociLayout is a parsed OCI image layout directory.
type ociLayout struct {
	dir   string
	index v1.IndexManifest
}

const refNameAnnotation = "org.opencontainers.image.ref.name"

func (c *Client) layout(dir string) (*ociLayout, error) {
	c.ociMu.Lock()
	defer c.ociMu.Unlock()
	if l, ok := c.ociIdx[dir]; ok {
		return l, nil
	}
	b, err := safefile.ReadFile(filepath.Join(dir, "index.json"), safefile.Options{})
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("OCI layout %s: index.json: %w", dir, err)
	}
	l := &ociLayout{dir: dir, index: idx}
	c.ociIdx[dir] = l
	return l, nil
}

func (l *ociLayout) tags() []string {
	var tags []string
	for _, d := range l.index.Manifests {
		if t := d.Annotations[refNameAnnotation]; t != "" {
			tags = append(tags, t)
		}
	}
	sort.Strings(tags)
	return tags
}

// find returns the descriptor for a tag ("" = the only image) in index.json.
func (l *ociLayout) find(tag string) (v1.Descriptor, error) {
	var found []v1.Descriptor
	for _, d := range l.index.Manifests {
		if tag == "" || d.Annotations[refNameAnnotation] == tag {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0:
		return v1.Descriptor{}, fmt.Errorf("OCI layout %s has no image tagged %q (tags: %s)", l.dir, tag, strings.Join(l.tags(), ", "))
	default:
		return v1.Descriptor{}, fmt.Errorf("OCI layout %s holds %d images; name one with oci:%s:TAG", l.dir, len(found), l.dir)
	}
}

func (l *ociLayout) blobPath(h v1.Hash) string {
	return filepath.Join(l.dir, "blobs", h.Algorithm, h.Hex)
}

// Repository strips the tag and digest of a canonical image reference
// ("host[:port]/path[:tag][@digest]" → "host[:port]/path") without validating it; outputs
// such as the lock file use it to record where an image lives.
func Repository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// CheckRef validates an image reference flag value (--lvms-bundle, --ocp-release*) without
// contacting anything, so a typo is a usage error before the run starts.
func CheckRef(s string) error {
	if strings.Contains(s, "://") {
		return fmt.Errorf("reference %q: want HOST/PATH:TAG or @DIGEST (or oci:PATH), without a scheme", redact.URL(s))
	}
	_, err := parseRef(s)
	return err
}

// CheckRepo validates a repository flag value (--lvms-bundle-repo, --ocp-release-repo).
func CheckRepo(s string) error {
	if strings.Contains(s, "://") {
		return fmt.Errorf("repository %q: want HOST/PATH (or oci:PATH), without a scheme", redact.URL(s))
	}
	_, err := parseRepo(s)
	return err
}

// TagOf returns the tag of an image reference ("" when it is pinned by digest alone), or
// the error that makes it no reference.
func TagOf(ref string) (string, error) {
	r, err := parseRef(ref)
	return r.tag, err
}

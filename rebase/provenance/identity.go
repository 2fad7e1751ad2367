package provenance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
)

// Reference is an image reference in the fully expanded form the policy's scopes and the
// signatures' docker-reference use: a repository ("host[:port]/path", Docker Hub spelled
// docker.io), with a tag and/or a digest.
type Reference struct {
	Repo   string
	Tag    string
	Digest string
}

// String is repo[:tag][@digest].
func (r Reference) String() string {
	s := r.Repo
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// ParseReference parses an image reference (a docker-reference of a signature, a canonical
// reference of lvms-rebase) into its expanded form.
func ParseReference(s string) (Reference, error) { return parseReference(s) }

func parseReference(s string) (Reference, error) {
	var r Reference
	base := s
	if i := strings.LastIndex(s, "@"); i >= 0 {
		base, r.Digest = s[:i], s[i+1:]
		if _, err := v1.NewHash(r.Digest); err != nil {
			return Reference{}, fmt.Errorf("reference %q: digest: %w", s, err)
		}
	}
	if i := strings.LastIndex(base, ":"); i > strings.LastIndex(base, "/") {
		base, r.Tag = base[:i], base[i+1:]
		if _, err := name.NewTag("example.com/x:"+r.Tag, name.StrictValidation); err != nil {
			return Reference{}, fmt.Errorf("reference %q: tag %q: %w", s, r.Tag, err)
		}
	}
	repo, err := name.NewRepository(base)
	if err != nil {
		return Reference{}, fmt.Errorf("reference %q: %w", s, err)
	}
	r.Repo = repo.Name()
	if rest, ok := strings.CutPrefix(r.Repo, name.DefaultRegistry+"/"); ok {
		r.Repo = "docker.io/" + rest
	}
	return r, nil
}

// host is the registry part of the repository.
func (r Reference) host() string {
	h, _, _ := strings.Cut(r.Repo, "/")
	return h
}

// scopes are the docker transport scopes that may name r, most specific first, as
// containers/image computes them: the image (with its tag, with its digest), the repository,
// each parent namespace, the host, then "*.domain" for each parent domain of the host.
func (r Reference) scopes() []string {
	var out []string
	if r.Tag != "" {
		out = append(out, r.Repo+":"+r.Tag)
	}
	if r.Digest != "" {
		out = append(out, r.Repo+"@"+r.Digest)
	}
	for p := r.Repo; p != ""; {
		out = append(out, p)
		i := strings.LastIndex(p, "/")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	host := r.host()
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	for d := host; ; {
		_, parent, ok := strings.Cut(d, ".")
		if !ok || parent == "" {
			break
		}
		out = append(out, "*."+parent)
		d = parent
	}
	return out
}

// scopePath validates the non-wildcard docker scopes: HOST[:PORT][/PATH][:TAG|@DIGEST].
var scopePath = regexp.MustCompile(`^([a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)

// checkScopeName validates a docker scope that is not a wildcard.
func checkScopeName(scope string) error {
	base := scope
	if i := strings.LastIndex(base, "@"); i >= 0 {
		if _, err := v1.NewHash(base[i+1:]); err != nil {
			return fmt.Errorf("digest: %w", err)
		}
		base = base[:i]
	}
	host, path, _ := strings.Cut(base, "/")
	if path != "" {
		if i := strings.LastIndex(path, ":"); i >= 0 {
			if _, err := name.NewTag("example.com/x:"+path[i+1:], name.StrictValidation); err != nil {
				return fmt.Errorf("tag: %w", err)
			}
			path = path[:i]
		}
		if !scopePath.MatchString(path) {
			return fmt.Errorf("%q is not a repository path (lower-case letters, digits, . _ -)", path)
		}
	}
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		return fmt.Errorf("%q does not start with a registry host (HOST[:PORT])", host)
	}
	return nil
}

// Identity types of signedIdentity.
const (
	IdentityMatchExact             = "matchExact"
	IdentityMatchRepoDigestOrExact = "matchRepoDigestOrExact"
	IdentityMatchRepository        = "matchRepository"
	IdentityExactReference         = "exactReference"
	IdentityExactRepository        = "exactRepository"
	IdentityRemap                  = "remapIdentity"
)

// Identity is a signedIdentity rule: how the identity a signature claims must relate to the
// image's.
type Identity struct {
	Type             string `json:"type"`
	DockerReference  string `json:"dockerReference,omitempty"`
	DockerRepository string `json:"dockerRepository,omitempty"`
	Prefix           string `json:"prefix,omitempty"`
	SignedPrefix     string `json:"signedPrefix,omitempty"`
}

// parseIdentity decodes a signedIdentity object strictly; absent means
// matchRepoDigestOrExact.
func parseIdentity(raw json.RawMessage) (Identity, error) {
	if raw == nil {
		return Identity{Type: IdentityMatchRepoDigestOrExact}, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return Identity{}, errors.New("an object is required, not null")
	}
	var id Identity
	if err := strictyaml.UnmarshalJSON(raw, &id); err != nil {
		return Identity{}, err
	}
	want := map[string][]string{
		IdentityMatchExact: nil, IdentityMatchRepoDigestOrExact: nil, IdentityMatchRepository: nil,
		IdentityExactReference: {"dockerReference"}, IdentityExactRepository: {"dockerRepository"},
		IdentityRemap: {"prefix", "signedPrefix"},
	}
	fields, ok := want[id.Type]
	if !ok {
		return Identity{}, fmt.Errorf("type %q: expected one of matchExact, matchRepoDigestOrExact, matchRepository, exactReference, exactRepository, remapIdentity", id.Type)
	}
	set := map[string]string{"dockerReference": id.DockerReference, "dockerRepository": id.DockerRepository,
		"prefix": id.Prefix, "signedPrefix": id.SignedPrefix}
	for f, v := range set {
		needed := false
		for _, w := range fields {
			needed = needed || w == f
		}
		switch {
		case needed && v == "":
			return Identity{}, fmt.Errorf("%s: required by %s", f, id.Type)
		case !needed && v != "":
			return Identity{}, fmt.Errorf("%s: not a field of %s", f, id.Type)
		}
	}
	return id, id.check()
}

// check validates the references an identity rule names.
func (id Identity) check() error {
	switch id.Type {
	case IdentityExactReference:
		r, err := parseReference(id.DockerReference)
		if err != nil {
			return fmt.Errorf("dockerReference: %w", err)
		}
		if r.Tag == "" && r.Digest == "" {
			return fmt.Errorf("dockerReference %q: a tag or digest is required", id.DockerReference)
		}
	case IdentityExactRepository:
		if r, err := parseReference(id.DockerRepository); err != nil || r.Tag != "" || r.Digest != "" {
			return fmt.Errorf("dockerRepository %q: a repository without tag or digest is required", id.DockerRepository)
		}
	case IdentityRemap:
		for f, v := range map[string]string{"prefix": id.Prefix, "signedPrefix": id.SignedPrefix} {
			if strings.ContainsAny(v, "@") || checkScopeName(v) != nil {
				return fmt.Errorf("%s %q: a host[:port], namespace or repository is required", f, v)
			}
		}
	}
	return nil
}

// String says the rule in messages: "matchRepoDigestOrExact", "exactReference x.io/a:1".
func (id Identity) String() string {
	switch id.Type {
	case IdentityExactReference:
		return id.Type + " " + id.DockerReference
	case IdentityExactRepository:
		return id.Type + " " + id.DockerRepository
	case IdentityRemap:
		return fmt.Sprintf("%s %s=%s", id.Type, id.Prefix, id.SignedPrefix)
	}
	return id.Type
}

// Match reports whether a signature claiming the identity signed is acceptable for image, the
// image's identity: its canonical repository and the digest written (lvms-rebase writes and
// MicroShift's nodes pull images by digest, so image carries no tag).
func (id Identity) Match(image, signed Reference) bool {
	switch id.Type {
	case IdentityMatchExact:
		return signed == image
	case IdentityMatchRepoDigestOrExact:
		return repoDigestOrExact(image, signed)
	case IdentityMatchRepository:
		return signed.Repo == image.Repo
	case IdentityExactReference:
		want, err := parseReference(id.DockerReference)
		return err == nil && signed == want
	case IdentityExactRepository:
		want, err := parseReference(id.DockerRepository)
		return err == nil && signed.Repo == want.Repo
	case IdentityRemap:
		return repoDigestOrExact(remap(image, id.Prefix, id.SignedPrefix), signed)
	}
	return false
}

// repoDigestOrExact: an image named by tag needs the same reference; by digest, the same
// repository.
func repoDigestOrExact(image, signed Reference) bool {
	if image.Tag != "" {
		return signed.Repo == image.Repo && signed.Tag == image.Tag && signed.Digest == ""
	}
	return signed.Repo == image.Repo
}

// remap replaces prefix of image's repository (a whole host, namespace or repository) with
// signedPrefix; an image outside prefix is returned as it is.
func remap(image Reference, prefix, signedPrefix string) Reference {
	if image.Repo == prefix {
		image.Repo = signedPrefix
	} else if rest, ok := strings.CutPrefix(image.Repo, prefix+"/"); ok {
		image.Repo = signedPrefix + "/" + rest
	}
	return image
}

package provenance

import (
	"strings"
	"testing"
)

// TestIdentityMatch: each signedIdentity rule against an image named by digest (as
// lvms-rebase writes and MicroShift's nodes pull them) and one named by tag.
func TestIdentityMatch(t *testing.T) {
	d := "sha256:" + strings.Repeat("1", 64)
	byDigest := Reference{Repo: "registry.redhat.io/lvms4/op", Digest: d}
	byTag := Reference{Repo: "registry.redhat.io/lvms4/op", Tag: "v4.18.4"}
	id := func(typ string, kv ...string) Identity {
		i := Identity{Type: typ}
		for j := 0; j < len(kv); j += 2 {
			switch kv[j] {
			case "ref":
				i.DockerReference = kv[j+1]
			case "repo":
				i.DockerRepository = kv[j+1]
			case "prefix":
				i.Prefix = kv[j+1]
			case "signed":
				i.SignedPrefix = kv[j+1]
			}
		}
		return i
	}
	for _, c := range []struct {
		rule   Identity
		image  Reference
		signed string
		want   bool
	}{
		{id(IdentityMatchRepoDigestOrExact), byDigest, "registry.redhat.io/lvms4/op:v4.18.4", true},
		{id(IdentityMatchRepoDigestOrExact), byDigest, "registry.redhat.io/lvms4/op", true},
		{id(IdentityMatchRepoDigestOrExact), byDigest, "registry.redhat.io/lvms4/other:v4.18.4", false},
		{id(IdentityMatchRepoDigestOrExact), byDigest, "mirror.example.com/lvms4/op:v4.18.4", false},
		{id(IdentityMatchRepoDigestOrExact), byTag, "registry.redhat.io/lvms4/op:v4.18.4", true},
		{id(IdentityMatchRepoDigestOrExact), byTag, "registry.redhat.io/lvms4/op:v4.18", false},
		{id(IdentityMatchExact), byDigest, "registry.redhat.io/lvms4/op:v4.18.4", false},
		{id(IdentityMatchExact), byDigest, "registry.redhat.io/lvms4/op@" + d, true},
		{id(IdentityMatchExact), byTag, "registry.redhat.io/lvms4/op:v4.18.4", true},
		{id(IdentityMatchRepository), byTag, "registry.redhat.io/lvms4/op:latest", true},
		{id(IdentityMatchRepository), byTag, "registry.redhat.io/lvms4/op2:latest", false},
		{id(IdentityExactReference, "ref", "vendor.example.com/op:1"), byDigest, "vendor.example.com/op:1", true},
		{id(IdentityExactReference, "ref", "vendor.example.com/op:1"), byDigest, "vendor.example.com/op:2", false},
		{id(IdentityExactRepository, "repo", "vendor.example.com/op"), byDigest, "vendor.example.com/op:2", true},
		{id(IdentityExactRepository, "repo", "vendor.example.com/op"), byDigest, "registry.redhat.io/lvms4/op:2", false},
		{id(IdentityRemap, "prefix", "registry.redhat.io/lvms4", "signed", "quay.io/lvms"), byDigest, "quay.io/lvms/op:v1", true},
		{id(IdentityRemap, "prefix", "registry.redhat.io/lvms4", "signed", "quay.io/lvms"), byDigest, "registry.redhat.io/lvms4/op:v1", false},
		{id(IdentityRemap, "prefix", "registry.redhat.io/lvms", "signed", "quay.io/lvms"), byDigest, "registry.redhat.io/lvms4/op:v1", true}, // not a prefix at a segment: unchanged
		{id(IdentityRemap, "prefix", "registry.redhat.io", "signed", "quay.io"), byTag, "quay.io/lvms4/op:v4.18.4", true},
		{id(IdentityRemap, "prefix", "registry.redhat.io", "signed", "quay.io"), byTag, "quay.io/lvms4/op:v4.18", false},
		{id(IdentityMatchRepository), Reference{Repo: "docker.io/library/busybox"}, "busybox:1", true},
		{id(IdentityMatchRepository), Reference{Repo: "docker.io/library/busybox"}, "index.docker.io/library/busybox:1", true},
	} {
		signed, err := ParseReference(c.signed)
		if err != nil {
			t.Fatalf("%s: %v", c.signed, err)
		}
		if got := c.rule.Match(c.image, signed); got != c.want {
			t.Errorf("%s: image %s, signed %s: %v, want %v", c.rule, c.image, c.signed, got, c.want)
		}
	}
}

// TestParseReference: references in their fully expanded form, tag and digest kept apart.
func TestParseReference(t *testing.T) {
	d := "sha256:" + strings.Repeat("2", 64)
	for in, want := range map[string]Reference{
		"quay.io/a/b:1.0-x86_64":  {Repo: "quay.io/a/b", Tag: "1.0-x86_64"},
		"localhost:5000/a@" + d:   {Repo: "localhost:5000/a", Digest: d},
		"quay.io/a/b:t@" + d:      {Repo: "quay.io/a/b", Tag: "t", Digest: d},
		"busybox":                 {Repo: "docker.io/library/busybox"},
		"127.0.0.1:5000/x/y:v1.2": {Repo: "127.0.0.1:5000/x/y", Tag: "v1.2"},
	} {
		got, err := ParseReference(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "UPPER/x", "x.io/a@sha256:12", "x.io/a:" + strings.Repeat("t", 200), "x.io/a b"} {
		if _, err := ParseReference(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

package provenance

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
)

// TestBuiltinKeys holds the embedded keys to the fingerprints docs/design.md records.
func TestBuiltinKeys(t *testing.T) {
	p, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"567E347AD0044ADE55BA8A5F199E2F91FD431D51":                                "Red Hat release key 2",
		"B08B659EE86AF623BC90E8DB938A80CAF21541EB":                                "Red Hat beta key 2",
		"6A9588F07F2D3AE7973AD2A9193E53CCD2E2F7A4":                                "OpenShift CI key openshift-ci-4",
		"sha256:ba9d26350d78893a20f337e2153a113108bfcf064085afaee60d446e63405576": "Red Hat release key 3",
	}
	got := map[string]string{}
	for _, k := range p.Keys() {
		got[k.Fingerprint] = k.Name
		if k.Fingerprint == "6A9588F07F2D3AE7973AD2A9193E53CCD2E2F7A4" && k.Expires.Format(time.DateOnly) != "2027-03-31" {
			t.Errorf("openshift-ci-4 expires %s, want 2027-03-31", k.Expires)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("built-in keys %v, want %v", got, want)
	}
	for fp, name := range want {
		if got[fp] != name {
			t.Errorf("key %s: name %q, want %q", fp, got[fp], name)
		}
	}
}

// TestBuiltinPolicy checks which requirement the built-in policy sets for each source.
func TestBuiltinPolicy(t *testing.T) {
	p, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref, typ, scope string
		keys            int
	}{
		{"quay.io/openshift-release-dev/ocp-release:4.18.12-x86_64", TypeSignedBy, "quay.io/openshift-release-dev/ocp-release", 2},
		{"registry.ci.openshift.org/ocp-arm64/release-arm64:4.18.0-0.nightly-arm64-2025-01-01-000000", TypeSignedBy, "registry.ci.openshift.org", 1},
		{"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4", TypeSigstoreSigned, "registry.redhat.io", 1},
		{"quay.io/lvms_dev/lvms-operator-bundle:v4.18.0", TypeReject, "default", 0},
		{"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("a", 64), TypeReject, "default", 0},
	} {
		ref, err := parseReference(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		reqs, scope := p.For(ref)
		if len(reqs) != 1 || reqs[0].Type != c.typ || scope != c.scope || len(reqs[0].Keys) != c.keys {
			t.Errorf("%s: %d requirements (%+v) from %q, want one %s with %d keys from %q", c.ref, len(reqs), reqs, scope, c.typ, c.keys, c.scope)
		}
		if len(reqs) == 1 && c.keys > 0 && reqs[0].Identity.Type != IdentityMatchRepoDigestOrExact {
			t.Errorf("%s: identity %s", c.ref, reqs[0].Identity)
		}
	}
}

// nodePolicy is the shape of the policy.json MicroShift's tests install on a node (a sigstore
// key for registry.redhat.io and quay.io/openshift-release-dev, exceptions accepted anything).
const nodePolicy = `{
    "default": [{"type": "reject"}],
    "transports": {
        "docker": {
            "registry.redhat.io/openshift4/ose-kube-rbac-proxy": [{"type": "insecureAcceptAnything"}],
            "quay.io/openshift-release-dev": [{
                "type": "sigstoreSigned",
                "keyPath": "KEYPATH",
                "signedIdentity": {"type": "matchRepoDigestOrExact"}
            }],
            "registry.redhat.io": [{
                "type": "sigstoreSigned",
                "keyPath": "KEYPATH",
                "signedIdentity": {"type": "matchRepoDigestOrExact"}
            }],
            "registry.ci.openshift.org": [{"type": "insecureAcceptAnything"}]
        },
        "docker-daemon": {"": [{"type": "insecureAcceptAnything"}]}
    }
}`

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadNodePolicy reads a node's policy.json with an absolute keyPath and a relative one.
func TestLoadNodePolicy(t *testing.T) {
	keys := testsign.Shared()
	dir := t.TempDir()
	key := writeFile(t, dir, "RedHat_ReleaseKey3.pub", testsign.PublicPEM(keys.Cosign))
	for _, kp := range []string{key, "RedHat_ReleaseKey3.pub", "./RedHat_ReleaseKey3.pub"} {
		p, err := LoadPolicy(writeFile(t, dir, "policy.json", []byte(strings.ReplaceAll(nodePolicy, "KEYPATH", kp))))
		if err != nil {
			t.Fatalf("keyPath %s: %v", kp, err)
		}
		ref, _ := parseReference("registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:" + strings.Repeat("b", 64))
		reqs, scope := p.For(ref)
		if scope != "registry.redhat.io" || reqs[0].Type != TypeSigstoreSigned || reqs[0].Keys[0].Format != FormatSigstore {
			t.Errorf("keyPath %s: %s %+v", kp, scope, reqs)
		}
		ref, _ = parseReference("registry.redhat.io/openshift4/ose-kube-rbac-proxy:v4.18")
		if reqs, _ := p.For(ref); reqs[0].Type != TypeInsecureAcceptAnything {
			t.Errorf("a more specific scope must win: %+v", reqs)
		}
		if !strings.HasPrefix(p.Digest, "sha256:") || p.Source != filepath.Join(dir, "policy.json") {
			t.Errorf("source %q digest %q", p.Source, p.Digest)
		}
	}
}

// TestScopePrecedence: the most specific scope applies: image, repository, namespaces, host,
// wildcard domains, then the transport default, then the global default.
func TestScopePrecedence(t *testing.T) {
	d := "sha256:" + strings.Repeat("c", 64)
	scopes := []string{
		"a.example.com/ns/sub/repo:v1", "a.example.com/ns/sub/repo@" + d, "a.example.com/ns/sub/repo",
		"a.example.com/ns/sub", "a.example.com/ns", "a.example.com", "*.example.com", "*.com", "",
	}
	for i := range scopes {
		var b strings.Builder
		b.WriteString(`{"default": [{"type": "reject"}], "transports": {"docker": {`)
		for j, s := range scopes[i:] {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + s + `": [{"type": "insecureAcceptAnything"}]`)
		}
		b.WriteString("}}}")
		p, err := ParsePolicy([]byte(b.String()), "p.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := Reference{Repo: "a.example.com/ns/sub/repo", Tag: "v1", Digest: d}
		_, got := p.For(ref)
		want := scopes[i]
		if want == "" {
			want = `transports.docker[""]`
		}
		if got != want {
			t.Errorf("with scopes %v: %q applies, want %q", scopes[i:], got, want)
		}
	}
	p, err := ParsePolicy([]byte(`{"default": [{"type": "reject"}]}`), "p.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, got := p.For(Reference{Repo: "x.io/y"}); got != "default" {
		t.Errorf("no transports: %q applies", got)
	}
	if _, got := p.For(Reference{Repo: "b.example.org:5000/x"}); got != "default" {
		t.Errorf("port: %q", got)
	}
}

// TestParsePolicyErrors: every malformed policy is refused with the file and field named.
func TestParsePolicyErrors(t *testing.T) {
	keys := testsign.Shared()
	dir := t.TempDir()
	pgp := base64.StdEncoding.EncodeToString(testsign.ArmoredPublic(keys.Release))
	pem := base64.StdEncoding.EncodeToString(testsign.PublicPEM(keys.Cosign))
	writeFile(t, dir, "key.pub", testsign.PublicPEM(keys.Cosign))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "keydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	priv := base64.StdEncoding.EncodeToString([]byte("-----BEGIN PGP PRIVATE KEY BLOCK-----\nxx\n-----END PGP PRIVATE KEY BLOCK-----\n"))
	sig := func(body string) string {
		return `{"default": [{"type": "reject"}], "transports": {"docker": {"x.io/r": [` + body + `]}}}`
	}
	for _, c := range []struct{ name, doc, want string }{
		{"not json", `{`, "p.json"},
		{"yaml", "default:\n- type: reject\n", "invalid character"},
		{"trailing", `{"default": [{"type": "reject"}]} x`, "after top-level value"},
		{"no default", `{"transports": {}}`, "default: required"},
		{"empty default", `{"default": []}`, "default: an empty list"},
		{"unknown top", `{"default": [{"type": "reject"}], "defaults": []}`, `unknown field "defaults"`},
		{"duplicate", `{"default": [{"type": "reject"}], "default": [{"type": "reject"}]}`, `duplicate field "default"`},
		{"unknown type", sig(`{"type": "signedby"}`), `transports.docker["x.io/r"][0].type: "signedby"`},
		{"null requirement", sig(`null`), "not null"},
		{"reject with key", sig(`{"type": "reject", "keyPath": "/k"}`), `[0].keyPath: not a field of a reject requirement`},
		{"unknown field", sig(`{"type": "signedBy", "keyType": "GPGKeys", "keyData": "` + pgp + `", "keyDta": "x"}`), `unknown field "keyDta"`},
		{"no keyType", sig(`{"type": "signedBy", "keyData": "` + pgp + `"}`), `.keyType: expected "GPGKeys"`},
		{"other keyType", sig(`{"type": "signedBy", "keyType": "X509", "keyData": "` + pgp + `"}`), `.keyType: expected "GPGKeys"`},
		{"no key", sig(`{"type": "signedBy", "keyType": "GPGKeys"}`), "exactly one of keyPath, keyPaths, keyData is required, got 0"},
		{"two keys", sig(`{"type": "sigstoreSigned", "keyData": "` + pem + `", "keyPath": "key.pub"}`), "exactly one of keyPath, keyPaths, keyData, keyDatas is required, got 2"},
		{"empty keyPaths", sig(`{"type": "sigstoreSigned", "keyPaths": []}`), ".keyPaths: an empty list"},
		{"fulcio", sig(`{"type": "sigstoreSigned", "fulcio": {}}`), ".fulcio: not supported by lvms-rebase"},
		{"rekor", sig(`{"type": "sigstoreSigned", "keyData": "` + pem + `", "rekorPublicKeyData": "x"}`), ".rekorPublicKeyData: not supported"},
		{"keyDatas on signedBy", sig(`{"type": "signedBy", "keyType": "GPGKeys", "keyDatas": ["` + pgp + `"]}`), ".keyDatas: not a field of a signedBy"},
		{"bad base64", sig(`{"type": "sigstoreSigned", "keyData": "%%%"}`), "not base64"},
		{"pgp key for sigstore", sig(`{"type": "sigstoreSigned", "keyData": "` + pgp + `"}`), `no PEM "PUBLIC KEY" block`},
		{"pem key for signedBy", sig(`{"type": "signedBy", "keyType": "GPGKeys", "keyData": "` + pem + `"}`), "not an OpenPGP public keyring"},
		{"private key", sig(`{"type": "signedBy", "keyType": "GPGKeys", "keyData": "` + priv + `"}`), "holds a private key"},
		{"missing keyPath", sig(`{"type": "sigstoreSigned", "keyPath": "nope.pub"}`), "nope.pub"},
		{"fifo keyPath", sig(`{"type": "sigstoreSigned", "keyPath": "fifo"}`), "not a regular file"},
		{"absolute fifo", sig(`{"type": "sigstoreSigned", "keyPath": "` + filepath.Join(dir, "fifo") + `"}`), "not a regular file"},
		{"dir keyPath", sig(`{"type": "sigstoreSigned", "keyPath": "keydir"}`), "not a regular file"},
		{"escaping keyPath", sig(`{"type": "sigstoreSigned", "keyPath": "../key.pub"}`), "must stay under the policy file's directory"},
		{"empty keyPath", sig(`{"type": "sigstoreSigned", "keyPath": ""}`), "an empty path"},
		{"identity unknown", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "matchAll"}}`), `signedIdentity: type "matchAll"`},
		{"identity null", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": null}`), "signedIdentity: an object is required"},
		{"identity missing field", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "exactReference"}}`), "dockerReference: required by exactReference"},
		{"identity extra field", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "matchExact", "prefix": "x.io"}}`), "prefix: not a field of matchExact"},
		{"identity exactReference untagged", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "exactReference", "dockerReference": "x.io/a"}}`), "a tag or digest is required"},
		{"identity exactRepository tagged", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "exactRepository", "dockerRepository": "x.io/a:1"}}`), "without tag or digest"},
		{"identity remap with digest", sig(`{"type": "sigstoreSigned", "keyPath": "key.pub", "signedIdentity": {"type": "remapIdentity", "prefix": "x.io@sha256:00", "signedPrefix": "y.io"}}`), "prefix"},
		{"scheme scope", `{"default": [{"type": "reject"}], "transports": {"docker": {"https://x.io": [{"type": "reject"}]}}}`, "without a scheme"},
		{"bad wildcard", `{"default": [{"type": "reject"}], "transports": {"docker": {"x*.io": [{"type": "reject"}]}}}`, `only as the "*." prefix`},
		{"wildcard port", `{"default": [{"type": "reject"}], "transports": {"docker": {"*.x.io:5000": [{"type": "reject"}]}}}`, "a wildcard scope"},
		{"upper-case scope", `{"default": [{"type": "reject"}], "transports": {"docker": {"x.io/Repo": [{"type": "reject"}]}}}`, "not a repository path"},
		{"hostless scope", `{"default": [{"type": "reject"}], "transports": {"docker": {"library/busybox": [{"type": "reject"}]}}}`, "does not start with a registry host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadPolicy(writeFile(t, dir, "p.json", []byte(c.doc)))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.doc)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, "p.json")) {
				t.Errorf("error %q: want it to name the file and say %q", err, c.want)
			}
		})
	}
}

// TestPolicyFileRefused: a policy that is no regular file, or too large, is refused before it
// is read.
func TestPolicyFileRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "not a regular file"},
		{dir, "not a regular file"},
		{zero, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{writeFile(t, dir, "big.json", make([]byte, MaxPolicySize+1)), "byte cap"},
		{writeFile(t, dir, "empty.json", nil), "an empty file"},
		{filepath.Join(dir, "absent.json"), "no such file"},
	} {
		if _, err := LoadPolicy(c.path); err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming it and saying %q", c.path, err, c.want)
		}
	}
}

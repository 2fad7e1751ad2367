package provenance

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
)

// Requirement types of containers-policy.json(5).
const (
	TypeInsecureAcceptAnything = "insecureAcceptAnything"
	TypeReject                 = "reject"
	TypeSignedBy               = "signedBy"
	TypeSigstoreSigned         = "sigstoreSigned"
)

// Policy is a containers-policy.json(5) document: the requirements of the docker transport's
// scopes, its transport default ("" scope) and the global default. Other transports are
// parsed and checked like the docker one but never apply: lvms-rebase pulls from registries.
type Policy struct {
	// Source names the policy in messages and records: "built-in" or the file's path.
	Source string
	// Digest is "built-in" or the sha256 of the file's bytes ("sha256:<hex>"), recorded in the
	// lock so that --check knows which policy verified the tree.
	Digest string

	global    []Requirement
	docker    map[string][]Requirement // scope → requirements; "" is the transport default
	hasDocker bool
}

// Requirement is one requirement object of a policy, with its keys loaded.
type Requirement struct {
	// Type is one of the Type* constants.
	Type string
	// Keys are the keys a signedBy (OpenPGP) or sigstoreSigned (public keys) requirement trusts.
	Keys []*Key
	// Identity is the signedIdentity rule (matchRepoDigestOrExact when the field is absent).
	Identity Identity
	// Where names the requirement in the policy, for messages: `transports.docker["quay.io"][0]`.
	Where string
}

// rawPolicy is the top level of the document, decoded strictly.
type rawPolicy struct {
	Default    []json.RawMessage                       `json:"default"`
	Transports map[string]map[string][]json.RawMessage `json:"transports"`
}

// rawRequirement holds every field any requirement type may carry; Parse checks that a
// requirement has only its type's fields.
type rawRequirement struct {
	Type                string          `json:"type"`
	KeyType             *string         `json:"keyType"`
	KeyPath             *string         `json:"keyPath"`
	KeyPaths            []string        `json:"keyPaths"`
	KeyData             *string         `json:"keyData"`
	KeyDatas            []string        `json:"keyDatas"`
	SignedIdentity      json.RawMessage `json:"signedIdentity"`
	Fulcio              json.RawMessage `json:"fulcio"`
	PKI                 json.RawMessage `json:"pki"`
	RekorPublicKeyPath  json.RawMessage `json:"rekorPublicKeyPath"`
	RekorPublicKeyPaths json.RawMessage `json:"rekorPublicKeyPaths"`
	RekorPublicKeyData  json.RawMessage `json:"rekorPublicKeyData"`
	RekorPublicKeyDatas json.RawMessage `json:"rekorPublicKeyDatas"`
}

// PolicyError is a policy document that cannot be used: it names the file and the field.
type PolicyError struct {
	File  string
	Field string
	Err   error
}

func (e *PolicyError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("signature policy %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("signature policy %s: %s: %v", e.File, e.Field, e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// MaxPolicySize bounds a policy file (MicroShift's is 2 KiB; a keyData keyring a few KiB).
const MaxPolicySize = 4 << 20

// LoadPolicy reads a containers-policy.json(5) file. Relative keyPath values are read
// relative to the file's directory (a policy committed next to its keys works from any
// working directory); absolute ones, as on a node (/etc/containers/…), as they are.
func LoadPolicy(path string) (*Policy, error) {
	data, err := readCapped(path, MaxPolicySize)
	if err != nil {
		return nil, &PolicyError{File: path, Err: err}
	}
	// safefile: keys are read through readKey (regular files under MaxPolicySize, through
	// safefile.ReadFS); a node's key directories may hold links, as /etc/pki does.
	return ParsePolicy(data, path, os.DirFS(filepath.Dir(path)))
}

// readCapped reads a regular file of at most max bytes (a FIFO or a device is refused before
// it is opened for reading, so it cannot block or flood the run).
func readCapped(path string, max int64) ([]byte, error) {
	data, err := safefile.ReadFile(path, safefile.Options{Follow: true, Max: max})
	if err == nil && len(data) == 0 {
		err = errors.New("an empty file")
	}
	return data, err
}

// ParsePolicy parses a policy document named name; keyPath values are read from keys (paths
// relative to it; absolute paths from the file system). Parsing is strict, as
// containers/image's: unknown or duplicate fields, a requirement with another type's fields,
// an empty requirement list, a key that does not load — each is an error naming its field.
func ParsePolicy(data []byte, name string, keys fs.FS) (*Policy, error) {
	var raw rawPolicy
	if err := strictyaml.UnmarshalJSON(data, &raw); err != nil {
		return nil, &PolicyError{File: name, Err: err}
	}
	sum := sha256.Sum256(data)
	p := &Policy{Source: name, Digest: "sha256:" + hex.EncodeToString(sum[:]), docker: map[string][]Requirement{}}
	ld := &loader{file: name, keys: keys}
	if raw.Default == nil {
		return nil, &PolicyError{File: name, Field: "default", Err: errors.New("required (a list of requirements; [{\"type\": \"reject\"}] is the safe one)")}
	}
	var err error
	if p.global, err = ld.requirements("default", raw.Default); err != nil {
		return nil, err
	}
	for _, tr := range sortedKeys(raw.Transports) {
		for _, scope := range sortedKeys(raw.Transports[tr]) {
			field := fmt.Sprintf("transports.%s[%q]", tr, scope)
			if tr == "docker" {
				if err := checkDockerScope(scope); err != nil {
					return nil, &PolicyError{File: name, Field: field, Err: err}
				}
			}
			reqs, err := ld.requirements(field, raw.Transports[tr][scope])
			if err != nil {
				return nil, err
			}
			if tr == "docker" {
				p.docker[scope] = reqs
				p.hasDocker = true
			}
		}
	}
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkDockerScope accepts the docker transport's scopes: a repository with a tag or digest, a
// repository, a namespace, a host[:port], or "*.domain"; never a scheme.
func checkDockerScope(scope string) error {
	switch {
	case scope == "":
		return nil
	case strings.Contains(scope, "://"):
		return errors.New("a scope is HOST[:PORT][/PATH][:TAG|@DIGEST] without a scheme")
	case strings.HasPrefix(scope, "*."):
		if strings.ContainsAny(scope[2:], "*/:@") || scope == "*." {
			return errors.New(`a wildcard scope is "*.DOMAIN" (no port, path or further wildcard)`)
		}
		return nil
	case strings.Contains(scope, "*"):
		return errors.New(`"*" is allowed only as the "*." prefix of a domain`)
	}
	return checkScopeName(scope)
}

// loader loads requirement lists, naming the file and field in every error.
type loader struct {
	file string
	keys fs.FS
}

func (l *loader) fail(field string, format string, args ...any) error {
	return &PolicyError{File: l.file, Field: field, Err: fmt.Errorf(format, args...)}
}

func (l *loader) requirements(field string, raws []json.RawMessage) ([]Requirement, error) {
	if len(raws) == 0 {
		return nil, l.fail(field, "an empty list of requirements (use [{\"type\": \"insecureAcceptAnything\"}] to accept anything)")
	}
	out := make([]Requirement, 0, len(raws))
	for i, raw := range raws {
		r, err := l.requirement(fmt.Sprintf("%s[%d]", field, i), raw)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// fields lists which optional fields a requirement set, by their JSON names.
func (r *rawRequirement) fields() []string {
	var set []string
	add := func(name string, present bool) {
		if present {
			set = append(set, name)
		}
	}
	add("keyType", r.KeyType != nil)
	add("keyPath", r.KeyPath != nil)
	add("keyPaths", r.KeyPaths != nil)
	add("keyData", r.KeyData != nil)
	add("keyDatas", r.KeyDatas != nil)
	add("signedIdentity", r.SignedIdentity != nil)
	add("fulcio", r.Fulcio != nil)
	add("pki", r.PKI != nil)
	add("rekorPublicKeyPath", r.RekorPublicKeyPath != nil)
	add("rekorPublicKeyPaths", r.RekorPublicKeyPaths != nil)
	add("rekorPublicKeyData", r.RekorPublicKeyData != nil)
	add("rekorPublicKeyDatas", r.RekorPublicKeyDatas != nil)
	return set
}

// allowed are the fields each requirement type may carry (besides "type").
var allowed = map[string][]string{
	TypeInsecureAcceptAnything: nil,
	TypeReject:                 nil,
	TypeSignedBy:               {"keyType", "keyPath", "keyPaths", "keyData", "signedIdentity"},
	TypeSigstoreSigned:         {"keyPath", "keyPaths", "keyData", "keyDatas", "signedIdentity", "fulcio", "pki", "rekorPublicKeyPath", "rekorPublicKeyPaths", "rekorPublicKeyData", "rekorPublicKeyDatas"},
}

func (l *loader) requirement(field string, data json.RawMessage) (Requirement, error) {
	var raw rawRequirement
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return Requirement{}, l.fail(field, "a requirement object is required, not null")
	}
	if err := strictyaml.UnmarshalJSON(data, &raw); err != nil {
		return Requirement{}, l.fail(field, "%v", err)
	}
	ok, known := allowed[raw.Type]
	if !known {
		return Requirement{}, l.fail(field+".type", "%q: expected one of %s, %s, %s, %s", raw.Type,
			TypeInsecureAcceptAnything, TypeReject, TypeSignedBy, TypeSigstoreSigned)
	}
	for _, f := range raw.fields() {
		if !slices.Contains(ok, f) {
			return Requirement{}, l.fail(field+"."+f, "not a field of a %s requirement", raw.Type)
		}
	}
	r := Requirement{Type: raw.Type, Where: field}
	switch raw.Type {
	case TypeSignedBy:
		if raw.KeyType == nil || *raw.KeyType != "GPGKeys" {
			return r, l.fail(field+".keyType", "expected \"GPGKeys\" (the only key type of signedBy)")
		}
	case TypeSigstoreSigned:
		for _, f := range []string{"fulcio", "pki", "rekorPublicKeyPath", "rekorPublicKeyPaths", "rekorPublicKeyData", "rekorPublicKeyDatas"} {
			if slices.Contains(raw.fields(), f) {
				return r, l.fail(field+"."+f, "not supported by lvms-rebase (sigstoreSigned with public keys only: keyPath, keyPaths, keyData, keyDatas)")
			}
		}
	default:
		return r, nil
	}
	var err error
	if r.Keys, err = l.loadKeys(field, raw); err != nil {
		return r, err
	}
	if r.Identity, err = parseIdentity(raw.SignedIdentity); err != nil {
		return r, l.fail(field+".signedIdentity", "%v", err)
	}
	return r, nil
}

// loadKeys loads exactly one of keyPath, keyPaths, keyData, keyDatas.
func (l *loader) loadKeys(field string, raw rawRequirement) ([]*Key, error) {
	type src struct {
		name string
		data []byte
	}
	var srcs []src
	var given []string
	if raw.KeyPath != nil {
		given = append(given, "keyPath")
		b, err := l.readKey(*raw.KeyPath)
		if err != nil {
			return nil, l.fail(field+".keyPath", "%v", err)
		}
		srcs = append(srcs, src{*raw.KeyPath, b})
	}
	if raw.KeyPaths != nil {
		given = append(given, "keyPaths")
		if len(raw.KeyPaths) == 0 {
			return nil, l.fail(field+".keyPaths", "an empty list")
		}
		for i, p := range raw.KeyPaths {
			b, err := l.readKey(p)
			if err != nil {
				return nil, l.fail(fmt.Sprintf("%s.keyPaths[%d]", field, i), "%v", err)
			}
			srcs = append(srcs, src{p, b})
		}
	}
	datas := raw.KeyDatas
	if raw.KeyData != nil {
		given = append(given, "keyData")
		datas = []string{*raw.KeyData}
	} else if raw.KeyDatas != nil {
		given = append(given, "keyDatas")
		if len(raw.KeyDatas) == 0 {
			return nil, l.fail(field+".keyDatas", "an empty list")
		}
	}
	for i, d := range datas {
		b, err := base64.StdEncoding.DecodeString(d)
		if err != nil {
			return nil, l.fail(fmt.Sprintf("%s.%s", field, given[len(given)-1]), "key %d: not base64: %v", i, err)
		}
		srcs = append(srcs, src{fmt.Sprintf("%s keyData", l.file), b})
	}
	if len(given) != 1 {
		return nil, l.fail(field, "exactly one of keyPath, keyPaths, keyData%s is required, got %d (%s)",
			map[bool]string{true: ", keyDatas", false: ""}[raw.Type == TypeSigstoreSigned], len(given), strings.Join(given, ", "))
	}
	var keys []*Key
	for _, s := range srcs {
		var ks []*Key
		var err error
		if raw.Type == TypeSignedBy {
			ks, err = ParseOpenPGPKeys(s.data, s.name)
		} else {
			var k *Key
			k, err = ParseSigstoreKey(s.data, s.name)
			ks = []*Key{k}
		}
		if err != nil {
			return nil, l.fail(field+"."+given[0], "%v", err)
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// readKey reads a key file: absolute paths from the file system, relative ones from the
// policy's key directory.
func (l *loader) readKey(p string) ([]byte, error) {
	if p == "" {
		return nil, errors.New("an empty path")
	}
	if filepath.IsAbs(p) {
		return readCapped(p, MaxPolicySize)
	}
	if l.keys == nil {
		return nil, fmt.Errorf("%s: relative key paths need a policy file", p)
	}
	clean := filepath.ToSlash(filepath.Clean(p))
	if !fs.ValidPath(clean) {
		return nil, fmt.Errorf("%s: a relative key path must stay under the policy file's directory", p)
	}
	st, err := fs.Stat(l.keys, clean)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", p, st.Mode().Type())
	}
	if st.Size() > MaxPolicySize {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a key file may have", p, st.Size(), MaxPolicySize)
	}
	return safefile.ReadFS(l.keys, clean, MaxPolicySize)
}

// For returns the requirements that apply to an image of the docker transport (ref: a
// canonical reference with its repository and, when known, its tag and digest) and the
// scope they came from: the most specific matching scope, else the transport default, else
// the global default ("default").
func (p *Policy) For(ref Reference) ([]Requirement, string) {
	for _, scope := range ref.scopes() {
		if reqs, ok := p.docker[scope]; ok {
			return reqs, scope
		}
	}
	if reqs, ok := p.docker[""]; ok {
		return reqs, `transports.docker[""]`
	}
	return p.global, "default"
}

// Keys lists every key of the policy once, in the order the policy names them.
func (p *Policy) Keys() []*Key {
	var out []*Key
	seen := map[string]bool{}
	add := func(reqs []Requirement) {
		for _, r := range reqs {
			for _, k := range r.Keys {
				if !seen[k.Fingerprint] {
					seen[k.Fingerprint] = true
					out = append(out, k)
				}
			}
		}
	}
	add(p.global)
	for _, s := range sortedKeys(p.docker) {
		add(p.docker[s])
	}
	return out
}

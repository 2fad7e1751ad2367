package provenance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
)

// Signature stores OCP verifies payloads with (cluster-update-keys' stores/).
const (
	OfficialStore       = "https://storage.googleapis.com/openshift-release/official/signatures/openshift/release"
	OfficialMirrorStore = "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release"
	CIStore             = "https://storage.googleapis.com/openshift-ci-release/releases/signatures/openshift/release"
)

// defaultStores are the stores searched for atomic signatures by repository prefix: the
// official store and its mirror for named releases, the CI store for nightlies.
var defaultStores = []struct {
	prefix string
	stores []string
}{
	{"quay.io/openshift-release-dev", []string{OfficialStore, OfficialMirrorStore}},
	{"registry.ci.openshift.org", []string{CIStore}},
}

// DefaultStores are the signature stores searched for an image of repository when no store is
// configured (nil for a repository no default store serves).
func DefaultStores(repository string) []string {
	for _, d := range defaultStores {
		if repository == d.prefix || strings.HasPrefix(repository, d.prefix+"/") {
			return d.stores
		}
	}
	return nil
}

// Defaults for Options.
const (
	// DefaultMaxSignatures bounds N of <store>/sha256=<hex>/signature-N per store and digest.
	DefaultMaxSignatures = 16
	// ExpiryWarning is how far ahead a trusted key's expiry is a warning.
	ExpiryWarning = 60 * 24 * time.Hour
)

// Options configure a Verifier.
type Options struct {
	// Policy decides what must be signed by whom (nil: Builtin()).
	Policy *Policy
	// AllowUnsigned accepts a digest without a valid signature (missing, invalid or rejected by
	// the policy), recording it as unsigned with the reason. A store or registry that cannot be
	// reached is still an error: that is no verdict.
	AllowUnsigned bool
	// Stores replace DefaultStores for every image (canonical URLs; mirrors apply when fetched).
	Stores []string
	// MaxSignatures bounds N per store (default DefaultMaxSignatures).
	MaxSignatures int
	// Now is the time keys are checked at (default time.Now).
	Now func() time.Time
}

// Fetcher fetches signatures. rebase/source implements it over the run's transport (retries,
// size caps, TLS policy, redaction), mirrors and cache. A fetcher may answer from its cache
// (cached true); a signature from the cache that does not verify is asked for again with
// fresh set, so a stale copy never decides.
type Fetcher interface {
	// StoreSignature fetches <store>/sha256=<hex>/signature-<n> of digest. found is false when
	// the store answers 404 (there is no such signature); err is any other failure.
	StoreSignature(ctx context.Context, store, digest string, n int, fresh bool) (data []byte, found, cached bool, err error)
	// Attachments fetches the cosign signatures attached to repository@digest: its
	// sha256-<hex>.sig tag, or the .sig manifest sigDigest when given (a recorded one). It
	// returns nil when there is no such tag or manifest.
	Attachments(ctx context.Context, repository, digest, sigDigest string, fresh bool) (*Attachments, error)
}

// Attachments are the layers of a .sig manifest.
type Attachments struct {
	// Digest is the .sig manifest's digest.
	Digest string
	Layers []Attachment
	// Cached says the fetcher answered from its cache.
	Cached bool
}

// Attachment is one layer of a .sig manifest: a simple-signing payload and its signature.
type Attachment struct {
	MediaType string
	// Digest is the payload blob's digest (verified by the fetcher).
	Digest  string
	Payload []byte
	// Signature is the base64 dev.cosignproject.cosign/signature annotation.
	Signature string
}

// CosignPayloadMediaType is the media type of a .sig layer holding a simple-signing payload.
const CosignPayloadMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"

// CosignSignatureAnnotation holds a .sig layer's base64 signature.
const CosignSignatureAnnotation = "dev.cosignproject.cosign/signature"

// Subject is a digest to verify.
type Subject struct {
	// Role says what it is (Record.Role).
	Role string
	// Ref is the reference as resolved (tag or digest), for the scope and messages.
	Ref string
	// Repository is the canonical repository; Digest the digest written or used.
	Repository string
	Digest     string
	// Alternates are digests whose signature also proves Digest: the manifest list Digest was
	// chosen from. They are tried after Digest.
	Alternates []string
	// Version, when set, is the rule the signed identity's tag must meet on top of the policy's
	// signedIdentity (the bundle: the tag resolution chose; a payload: a tag of its version).
	Version *VersionRule
	// Hints are signatures recorded earlier (the lock, with --check): their locations are
	// tried first, so a re-verification reads what was recorded.
	Hints []Signature
}

// VersionRule is what the tag of a signed identity must say.
type VersionRule struct {
	// Want describes the tag for messages ("the tag v4.18.4-2").
	Want string
	// Accept reports whether tag is acceptable.
	Accept func(tag string) bool
}

// Verifier verifies subjects against a policy. It is safe for concurrent use; a subject is
// verified once (concurrent and later calls share the result).
type Verifier struct {
	opts   Options
	policy *Policy
	fetch  Fetcher

	mu    sync.Mutex
	calls map[string]*call

	warnMu   sync.Mutex
	warned   map[string]bool
	warnings []string
}

type call struct {
	done chan struct{}
	rec  Record
	err  error
}

// New builds a Verifier; it loads the built-in policy when opts.Policy is nil.
func New(opts Options, f Fetcher) (*Verifier, error) {
	if opts.Policy == nil {
		p, err := Builtin()
		if err != nil {
			return nil, err
		}
		opts.Policy = p
	}
	if opts.MaxSignatures <= 0 {
		opts.MaxSignatures = DefaultMaxSignatures
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, policy: opts.Policy, fetch: f, calls: map[string]*call{}, warned: map[string]bool{}}, nil
}

// Policy is the policy the Verifier applies.
func (v *Verifier) Policy() *Policy { return v.policy }

// Warnings are what the verification wants a maintainer to know (a trusted key that expires
// soon), in the order they arose.
func (v *Verifier) Warnings() []string {
	v.warnMu.Lock()
	defer v.warnMu.Unlock()
	return append([]string(nil), v.warnings...)
}

func (v *Verifier) warn(key, msg string) {
	v.warnMu.Lock()
	defer v.warnMu.Unlock()
	if !v.warned[key] {
		v.warned[key] = true
		v.warnings = append(v.warnings, msg)
	}
}

// NewReport is a Report of records under this Verifier's policy, sorted.
func (v *Verifier) NewReport(records []Record) *Report {
	r := &Report{Policy: v.policy.Digest, AllowUnsigned: v.opts.AllowUnsigned, Records: append([]Record(nil), records...)}
	if v.policy.Digest != BuiltinSource {
		r.PolicyFile = v.policy.Source
	}
	r.Sort()
	return r
}

// Verify verifies s: every requirement the policy sets for its repository must be met by a
// signature of s.Digest (or of an alternate) by a trusted key whose identity matches. It
// returns the record, or an *Error naming the image, the digest, what was expected and what
// was found. Concurrent and repeated calls for the same subject share one verification; a
// verification stopped by its context is not remembered.
func (v *Verifier) Verify(ctx context.Context, s Subject) (Record, error) {
	rec, err := v.verifyOnce(ctx, s)
	// One verification serves every role the digest plays; each caller's record and error name
	// its own.
	rec.Role = s.Role
	var e *Error
	if errors.As(err, &e) && e.Role != s.Role {
		cp := *e
		cp.Role = s.Role
		err = &cp
	}
	return rec, err
}

func (v *Verifier) verifyOnce(ctx context.Context, s Subject) (Record, error) {
	key := s.key()
	v.mu.Lock()
	c, ok := v.calls[key]
	if !ok {
		c = &call{done: make(chan struct{})}
		v.calls[key] = c
		v.mu.Unlock()
		c.rec, c.err = v.verify(ctx, s)
		if c.err != nil && ctx.Err() != nil {
			v.mu.Lock()
			delete(v.calls, key)
			v.mu.Unlock()
		}
		close(c.done)
		return c.rec, c.err
	}
	v.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		return Record{}, ctx.Err()
	}
	if c.err != nil && errors.Is(c.err, context.Canceled) && ctx.Err() == nil {
		return v.verifyOnce(ctx, s) // the first caller was stopped; this one is not
	}
	return c.rec, c.err
}

func (s Subject) key() string {
	want := ""
	if s.Version != nil {
		want = s.Version.Want
	}
	return strings.Join([]string{s.Repository, s.Digest, strings.Join(s.Alternates, ","), want}, "\x00")
}

// verify evaluates every requirement for s.
func (v *Verifier) verify(ctx context.Context, s Subject) (Record, error) {
	img, err := parseReference(s.Repository + "@" + s.Digest)
	if err != nil {
		return Record{}, fmt.Errorf("%s: %w", s.Role, err)
	}
	scopeRef := img
	if r, err := parseReference(s.Ref); err == nil && r.Repo == img.Repo {
		scopeRef.Tag = r.Tag
	}
	reqs, scope := v.policy.For(scopeRef)
	rec := Record{Role: s.Role, Image: s.Repository, Digest: s.Digest, Scope: scope}
	var failed *Error
	accepted := false
	for _, req := range reqs {
		var sig *Signature
		var ferr *Error
		switch req.Type {
		case TypeReject:
			ferr = v.newError(s, KindRejected, fmt.Sprintf("the policy %s rejects images of %s (%s)", v.policy.Source, scope, req.Where))
		case TypeInsecureAcceptAnything:
			accepted = true
		case TypeSignedBy, TypeSigstoreSigned:
			sig, ferr = v.requirement(ctx, s, img, req)
		}
		if ferr != nil {
			if ferr.Kind == KindUnreachable || ctx.Err() != nil {
				return Record{}, ferr
			}
			if failed == nil {
				failed = ferr
			}
			continue
		}
		if sig != nil {
			rec.Signatures = append(rec.Signatures, *sig)
		}
	}
	switch {
	case failed != nil && !v.opts.AllowUnsigned:
		return Record{}, failed
	case failed != nil:
		return Record{Role: s.Role, Image: s.Repository, Digest: s.Digest, Scope: scope, Status: StatusUnsigned,
			Reason: "allowed unsigned: " + failed.summary()}, nil
	case len(rec.Signatures) == 0 && accepted:
		rec.Status, rec.Reason = StatusUnsigned, fmt.Sprintf("the policy %s accepts anything for %s (%s)", v.policy.Source, scope, TypeInsecureAcceptAnything)
	default:
		rec.Status = StatusSigned
	}
	return rec, nil
}

// requirement finds a signature meeting one signedBy or sigstoreSigned requirement.
func (v *Verifier) requirement(ctx context.Context, s Subject, img Reference, req Requirement) (*Signature, *Error) {
	keys, expired := v.usableKeys(req)
	want := v.expected(s, img, req)
	if len(keys) == 0 {
		e := v.newError(s, KindExpired, want)
		e.Found = expired
		return nil, e
	}
	var sig *Signature
	var found []string
	var unreachable []error
	if req.Type == TypeSignedBy {
		sig, found, unreachable = v.searchAtomic(ctx, s, img, req, keys)
	} else {
		sig, found, unreachable = v.searchCosign(ctx, s, img, req, keys)
	}
	if sig != nil {
		return sig, nil
	}
	if ctx.Err() != nil {
		return nil, &Error{Role: s.Role, Image: s.Repository, Digest: s.Digest, Kind: KindUnreachable, Expected: want, Err: ctx.Err()}
	}
	if len(unreachable) > 0 {
		return nil, &Error{Role: s.Role, Image: s.Repository, Digest: s.Digest, Kind: KindUnreachable, Expected: want,
			Found: found, Err: errors.Join(unreachable...)}
	}
	kind := KindMissing
	if len(found) > 0 {
		kind = KindInvalid
	}
	e := v.newError(s, kind, want)
	e.Found = append(append(e.Found, found...), expired...)
	return nil, e
}

// usableKeys splits a requirement's keys into those valid now and descriptions of the
// expired ones; a key that expires within ExpiryWarning is a warning.
func (v *Verifier) usableKeys(req Requirement) ([]*Key, []string) {
	now := v.opts.Now()
	var ok []*Key
	var expired []string
	for _, k := range req.Keys {
		switch {
		case !k.Expires.IsZero() && !now.Before(k.Expires):
			expired = append(expired, fmt.Sprintf("trusted key %s expired on %s", k.Label(), k.Expires.UTC().Format(time.DateOnly)))
			continue
		case !k.Expires.IsZero() && k.Expires.Sub(now) < ExpiryWarning:
			v.warn(k.Fingerprint, fmt.Sprintf("trusted key %s (%s) expires on %s, in %d days; signatures by it stop verifying then",
				k.Label(), k.Source, k.Expires.UTC().Format(time.DateOnly), int(k.Expires.Sub(now).Hours()/24)))
		}
		ok = append(ok, k)
	}
	return ok, expired
}

// expected says what a requirement wants, for errors.
func (v *Verifier) expected(s Subject, img Reference, req Requirement) string {
	var labels []string
	for _, k := range req.Keys {
		labels = append(labels, k.Label())
	}
	var stores []string
	for _, st := range v.stores(s.Repository) {
		stores = append(stores, redact.URL(st))
	}
	format := "an atomic signature in " + strings.Join(stores, ", ")
	if len(stores) == 0 {
		format = "an atomic signature (no signature store is known for " + s.Repository + "; name one)"
	}
	if req.Type == TypeSigstoreSigned {
		format = "a cosign signature (" + img.Repo + ":" + sigTag(s.Digest) + ")"
	}
	msg := fmt.Sprintf("%s by %s, identity %s (%s in %s)", format, strings.Join(labels, " or "), img.Repo, req.Identity, req.Where)
	if s.Version != nil {
		msg += " with " + s.Version.Want
	}
	return msg
}

// stores are the signature stores searched for repository.
func (v *Verifier) stores(repository string) []string {
	if len(v.opts.Stores) > 0 {
		return v.opts.Stores
	}
	return DefaultStores(repository)
}

// sigTag is the tag cosign attaches signatures of digest under: sha256-<hex>.sig.
func sigTag(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }

// SigTag is the tag cosign attaches the signatures of digest under (sha256-<hex>.sig).
func SigTag(digest string) string { return sigTag(digest) }

// check holds a verified claim to the subject: the digest it signs is one of the subject's,
// its identity matches the image under the requirement's rule, and its tag meets the version
// rule.
func check(c claim, digest string, s Subject, img Reference, req Requirement) error {
	if c.Digest != digest {
		return fmt.Errorf("signs %s, not %s", c.Digest, digest)
	}
	if !req.Identity.Match(img, c.Identity) {
		return fmt.Errorf("identity %s does not match %s under %s", c.raw, img.Repo, req.Identity)
	}
	if s.Version != nil && (c.Identity.Tag == "" || !s.Version.Accept(c.Identity.Tag)) {
		return fmt.Errorf("identity %s does not name %s", c.raw, s.Version.Want)
	}
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// candidates are the digests whose signature proves s: its own, then the alternates.
func (s Subject) candidates() []string {
	return append([]string{s.Digest}, s.Alternates...)
}

// signature fills in the key and identity of a verified signature.
func signature(format string, k *Key, c claim, s Subject, digest string) *Signature {
	sig := &Signature{Format: format, Key: k.Fingerprint, KeyName: k.Name, Class: k.Class, Identity: c.raw}
	if digest != s.Digest {
		sig.SignedDigest = digest
	}
	return sig
}

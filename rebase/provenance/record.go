package provenance

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Status of a verified digest.
const (
	// StatusSigned: every requirement of the policy was met; Signatures say by what.
	StatusSigned = "signed"
	// StatusCovered: the digest reached the run by digest inside a payload whose own digest
	// was verified (CoveredBy names it): the payload's signature covers it.
	StatusCovered = "covered"
	// StatusUnsigned: no signature was required (insecureAcceptAnything) or it was missing or
	// did not verify and the run allowed unsigned content; Reason says which.
	StatusUnsigned = "unsigned"
)

// Record is what was verified for one digest a run writes or uses. It is recorded in the lock,
// `-o json` and the PR body.
type Record struct {
	// Role says what the digest is: "bundle", "payload x86_64", or the release key and arch of
	// an image ("lvms_operator x86_64").
	Role string `json:"role"`
	// Image is the canonical repository; Digest the digest written or used.
	Image  string `json:"image"`
	Digest string `json:"digest"`
	// Status is StatusSigned, StatusCovered or StatusUnsigned.
	Status string `json:"status"`
	// Scope is the policy scope whose requirements applied.
	Scope string `json:"scope,omitempty"`
	// Signatures are the signatures that met the requirements, one per requirement.
	Signatures []Signature `json:"signatures,omitempty"`
	// CoveredBy names the verified payload ("<repository>@<digest>") of a covered digest.
	CoveredBy string `json:"coveredBy,omitempty"`
	// Reason says why an unsigned digest was accepted.
	Reason string `json:"reason,omitempty"`
}

// Signature is one verified signature.
type Signature struct {
	// Format is FormatAtomic or FormatCosign.
	Format string `json:"format"`
	// Key is the fingerprint of the key that made it (Key.Fingerprint); KeyName its name.
	Key     string `json:"key"`
	KeyName string `json:"keyName,omitempty"`
	// Class is the key's class when lvms-rebase knows the key (Class* constants).
	Class string `json:"class,omitempty"`
	// Identity is the docker-reference the signature claims.
	Identity string `json:"identity"`
	// SignedDigest is the digest the signature names when it is not the record's own: the
	// manifest list the written per-arch digest was chosen from.
	SignedDigest string `json:"signedDigest,omitempty"`
	// Store and N locate an atomic signature: <store>/sha256=<hex>/signature-<n> (the
	// canonical store URL, without credentials).
	Store string `json:"store,omitempty"`
	N     int    `json:"n,omitempty"`
	// Sig is the digest of the .sig manifest a cosign signature came from, Layer its layer.
	Sig   string `json:"sig,omitempty"`
	Layer int    `json:"layer,omitempty"`
	// SHA256 is the digest of the signature file (atomic) or of the signed payload (cosign):
	// --check finds the very bytes in the cache by it.
	SHA256 string `json:"sha256"`
}

// Describe is the signature in one line: "cosign by Red Hat release key 3 (sha256:…) for
// registry.redhat.io/…:v4.18.4".
func (s Signature) Describe() string {
	who := s.Key
	if s.KeyName != "" {
		who = s.KeyName + " (" + s.Key + ")"
	}
	return fmt.Sprintf("%s by %s for %s", s.Format, who, s.Identity)
}

// Report is the provenance of a run: the policy and a record per digest.
type Report struct {
	// Policy is "built-in" or the policy file's digest ("sha256:<hex>"); PolicyFile the path
	// it was read from (not in the lock: a path of one machine).
	Policy     string `json:"policy"`
	PolicyFile string `json:"policyFile,omitempty"`
	// AllowUnsigned says the run accepted digests without a valid signature.
	AllowUnsigned bool `json:"allowUnsigned,omitempty"`
	// Records are sorted by image, then role, then digest.
	Records []Record `json:"records"`
}

// Sort orders the records as the lock, -o json and the PR body list them.
func (r *Report) Sort() {
	slices.SortFunc(r.Records, func(a, b Record) int {
		if c := strings.Compare(a.Image, b.Image); c != 0 {
			return c
		}
		if c := strings.Compare(a.Role, b.Role); c != 0 {
			return c
		}
		return strings.Compare(a.Digest, b.Digest)
	})
}

// Unsigned lists the records of digests that are not proven by a signature.
func (r *Report) Unsigned() []Record {
	var out []Record
	for _, rec := range r.Records {
		if rec.Status == StatusUnsigned {
			out = append(out, rec)
		}
	}
	return out
}

// CIOnly lists the signed records whose every signature is by an OpenShift CI key.
func (r *Report) CIOnly() []Record {
	var out []Record
	for _, rec := range r.Records {
		if rec.Status != StatusSigned || len(rec.Signatures) == 0 {
			continue
		}
		ci := true
		for _, s := range rec.Signatures {
			ci = ci && s.Class == ClassCI
		}
		if ci {
			out = append(out, rec)
		}
	}
	return out
}

var (
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate checks a report read from a lock file, naming each bad field under prefix.
func (r *Report) Validate(prefix string) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(prefix+format, a...)) }
	if r.Policy != BuiltinSource && !digestRE.MatchString(r.Policy) {
		add(".policy: %q: expected %s or sha256:<64 hex digits>", r.Policy, BuiltinSource)
	}
	seen := map[string]bool{}
	for i, rec := range r.Records {
		f := fmt.Sprintf(".records[%d] (%s)", i, rec.Role)
		if rec.Role == "" || rec.Image == "" {
			add("%s: role and image are required", f)
		}
		if !digestRE.MatchString(rec.Digest) {
			add("%s.digest: %q: expected sha256:<64 hex digits>", f, rec.Digest)
		}
		if k := rec.Role + " " + rec.Image + "@" + rec.Digest; seen[k] {
			add("%s: listed twice", f)
		} else {
			seen[k] = true
		}
		rec.validate(f, add)
	}
	return errs
}

func (rec Record) validate(f string, add func(string, ...any)) {
	switch rec.Status {
	case StatusSigned:
		if len(rec.Signatures) == 0 {
			add("%s.signatures: a signed digest needs its signatures", f)
		}
	case StatusCovered:
		if rec.CoveredBy == "" {
			add("%s.coveredBy: required for a covered digest", f)
		}
	case StatusUnsigned:
		if rec.Reason == "" {
			add("%s.reason: required for an unsigned digest", f)
		}
	default:
		add("%s.status: %q: expected %s, %s or %s", f, rec.Status, StatusSigned, StatusCovered, StatusUnsigned)
	}
	for j, s := range rec.Signatures {
		sf := fmt.Sprintf("%s.signatures[%d]", f, j)
		switch s.Format {
		case FormatAtomic:
			if s.Store == "" || s.N < 1 {
				add("%s: an atomic signature needs its store and n", sf)
			}
		case FormatCosign:
			if !digestRE.MatchString(s.Sig) {
				add("%s.sig: %q: expected sha256:<64 hex digits>", sf, s.Sig)
			}
		default:
			add("%s.format: %q: expected %s or %s", sf, s.Format, FormatAtomic, FormatCosign)
		}
		if s.Key == "" || s.Identity == "" {
			add("%s: key and identity are required", sf)
		}
		if !hexRE.MatchString(s.SHA256) {
			add("%s.sha256: %q: expected 64 hex digits", sf, s.SHA256)
		}
		if s.SignedDigest != "" && !digestRE.MatchString(s.SignedDigest) {
			add("%s.signedDigest: %q: expected sha256:<64 hex digits>", sf, s.SignedDigest)
		}
	}
}

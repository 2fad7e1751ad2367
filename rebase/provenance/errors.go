package provenance

import (
	"fmt"
	"strings"
)

// Kinds of verification failure.
const (
	// KindMissing: no signature was found where the policy says to look.
	KindMissing = "no signature"
	// KindInvalid: signatures were found, none met the requirement (wrong key, digest,
	// identity or version, or not a signature at all).
	KindInvalid = "no valid signature"
	// KindRejected: the policy rejects the image outright.
	KindRejected = "rejected by the policy"
	// KindExpired: every key the requirement trusts has expired.
	KindExpired = "every trusted key expired"
	// KindUnreachable: a signature store or registry could not be read; no verdict.
	KindUnreachable = "signatures could not be fetched"
)

// Error is a digest that failed verification: it names the image, the digest, what the policy
// expected (keys, identity) and what was found.
type Error struct {
	Role, Image, Digest string
	// Kind is one of the Kind* constants.
	Kind string
	// Expected says which signature the policy asked for.
	Expected string
	// Found lists each signature looked at and why it was not accepted.
	Found []string
	// Err is the fetch failure of KindUnreachable.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "signature check of %s %s@%s: %s", e.Role, e.Image, e.Digest, e.Kind)
	if e.Expected != "" {
		fmt.Fprintf(&b, "; expected %s", e.Expected)
	}
	if len(e.Found) > 0 {
		fmt.Fprintf(&b, "; found: %s", strings.Join(e.Found, "; "))
	} else if e.Kind == KindMissing {
		b.WriteString("; found none")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// summary is the error without the subject, for an unsigned record's reason.
func (e *Error) summary() string {
	s := e.Kind
	if len(e.Found) > 0 {
		s += " (found: " + strings.Join(e.Found, "; ") + ")"
	}
	return s
}

func (v *Verifier) newError(s Subject, kind, expected string) *Error {
	return &Error{Role: s.Role, Image: s.Repository, Digest: s.Digest, Kind: kind, Expected: expected}
}

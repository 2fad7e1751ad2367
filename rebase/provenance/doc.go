// Package provenance proves that every digest a rebase writes is what Red Hat (or OpenShift
// CI) signed: it evaluates a containers-policy.json(5) policy — the format MicroShift's nodes
// check images with — against OpenPGP "atomic container signatures" from signature stores
// (<store>/sha256=<hex>/signature-N) and cosign simple-signing signatures attached to the
// registry (sha256-<hex>.sig tags), and records, per digest, which key signed it for which
// identity and where the signature came from.
//
// The cryptography is go-crypto's (OpenPGP) and the standard library's (cosign keys); the
// policy, the payload format (containers-signature(5), parsed strictly) and the identity
// rules are this package's, and so is the version rule on top of the policy's signedIdentity:
// a signature of the bundle must name the tag resolution chose, a payload's a tag of its
// version — a signature for a floating tag alone proves nothing about a version. Signatures
// are fetched by the caller (Fetcher: rebase/source, through its transport, mirrors and
// cache). Without a policy file the built-in one applies (Builtin: Red Hat's and OpenShift
// CI's public keys, embedded from keys/).
package provenance

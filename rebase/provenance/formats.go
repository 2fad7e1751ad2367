package provenance

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
)

// Signature formats, as records name them.
const (
	// FormatAtomic is an OpenPGP-signed "atomic container signature" from a signature store.
	FormatAtomic = "atomic"
	// FormatCosign is a cosign simple-signing signature attached as a sha256-<hex>.sig tag.
	FormatCosign = "cosign"
)

// critical.type values of the simple-signing payloads (containers-signature(5)).
const (
	atomicType = "atomic container signature"
	cosignType = "cosign container image signature"
)

// Bounds on what a signature may be. Real ones are under 2 KiB; a store answering with more is
// broken or hostile, and the cap is enforced before anything is parsed.
const (
	// MaxSignatureSize bounds a signature file of a store and a cosign payload layer.
	MaxSignatureSize = 64 << 10
	// maxPayload bounds the signed JSON inside an OpenPGP message (it may be compressed).
	maxPayload = 64 << 10
)

// claim is what a verified signature says: its type, the manifest digest it signs and the
// identity it claims.
type claim struct {
	Type     string
	Digest   string
	Identity Reference
	raw      string // the identity as written
}

type criticalJSON struct {
	Type  string `json:"type"`
	Image struct {
		DockerManifestDigest string `json:"docker-manifest-digest"`
	} `json:"image"`
	Identity struct {
		DockerReference string `json:"docker-reference"`
	} `json:"identity"`
}

// parsePayload parses a simple-signing payload as containers-signature(5) asks: exactly the
// members critical and optional; critical with exactly type, image and identity, none missing,
// none unknown, none duplicated; optional an object (or null, as cosign writes it), whose
// members are not interpreted.
func parsePayload(data []byte, wantType string) (claim, error) {
	var top map[string]json.RawMessage
	if err := strictyaml.UnmarshalJSON(data, &top); err != nil {
		return claim{}, fmt.Errorf("payload: %w", err)
	}
	for k := range top {
		if k != "critical" && k != "optional" {
			return claim{}, fmt.Errorf("payload: unknown member %q", k)
		}
	}
	crit, ok := top["critical"]
	if !ok {
		return claim{}, errors.New("payload: no critical member")
	}
	opt, ok := top["optional"]
	if !ok {
		return claim{}, errors.New("payload: no optional member")
	}
	if o := bytes.TrimSpace(opt); !bytes.Equal(o, []byte("null")) && (len(o) == 0 || o[0] != '{') {
		return claim{}, errors.New("payload: optional is not an object")
	}
	var c criticalJSON
	if err := strictyaml.UnmarshalJSON(crit, &c); err != nil {
		return claim{}, fmt.Errorf("payload: critical: %w", err)
	}
	switch {
	case c.Type != wantType:
		return claim{}, fmt.Errorf("payload: critical.type %q, expected %q", c.Type, wantType)
	case c.Image.DockerManifestDigest == "":
		return claim{}, errors.New("payload: critical.image.docker-manifest-digest missing")
	case c.Identity.DockerReference == "":
		return claim{}, errors.New("payload: critical.identity.docker-reference missing")
	}
	if _, err := v1.NewHash(c.Image.DockerManifestDigest); err != nil {
		return claim{}, fmt.Errorf("payload: critical.image.docker-manifest-digest %q: %w", c.Image.DockerManifestDigest, err)
	}
	id, err := parseReference(c.Identity.DockerReference)
	if err != nil {
		return claim{}, fmt.Errorf("payload: critical.identity.docker-reference: %w", err)
	}
	return claim{Type: c.Type, Digest: c.Image.DockerManifestDigest, Identity: id, raw: c.Identity.DockerReference}, nil
}

// verifyAtomic checks an atomic container signature: an unarmored OpenPGP signed message (not
// encrypted, one signature) by one of keys, valid at now, whose payload is then parsed. The
// payload is not looked at before the signature verified.
func verifyAtomic(blob []byte, keys []*Key, now time.Time) (claim, *Key, error) {
	if len(blob) > MaxSignatureSize {
		return claim{}, nil, fmt.Errorf("%d bytes, more than a signature may have (%d)", len(blob), MaxSignatureSize)
	}
	if err := checkMessageShape(blob); err != nil {
		return claim{}, nil, err
	}
	var ring openpgp.EntityList
	for _, k := range keys {
		ring = append(ring, k.entity)
	}
	cfg := &packet.Config{Time: func() time.Time { return now }, MaxDecompressedMessageSize: new(int64(maxPayload))}
	md, err := openpgp.ReadMessage(bytes.NewReader(blob), ring, nil, cfg)
	if err != nil {
		return claim{}, nil, fmt.Errorf("not an OpenPGP signed message: %w", err)
	}
	if md.IsEncrypted || md.IsSymmetricallyEncrypted {
		return claim{}, nil, errors.New("an encrypted OpenPGP message, not a signed one")
	}
	if !md.IsSigned {
		return claim{}, nil, errors.New("an OpenPGP message without a signature")
	}
	// safefile: a signed message's body, bounded by maxPayload.
	body, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, maxPayload+1))
	if err != nil {
		return claim{}, nil, fmt.Errorf("reading the signed message: %w", err)
	}
	if len(body) > maxPayload {
		return claim{}, nil, fmt.Errorf("a signed payload of more than %d bytes", maxPayload)
	}
	switch {
	case md.SignedBy == nil:
		return claim{}, nil, fmt.Errorf("signed by key ID %016X, %w", md.SignedByKeyId, errNoKey)
	case md.SignatureError != nil:
		return claim{}, nil, fmt.Errorf("the OpenPGP signature does not verify: %w", md.SignatureError)
	case md.Signature == nil:
		return claim{}, nil, errors.New("the OpenPGP message carries no verifiable signature")
	case len(md.UnverifiedSignatures) > 0:
		return claim{}, nil, errors.New("the OpenPGP message carries more than one signature")
	}
	key := keyOf(keys, md.SignedBy.Entity)
	if key == nil {
		return claim{}, nil, errNoKey
	}
	c, err := parsePayload(body, atomicType)
	return c, key, err
}

// OpenPGP packet tags (RFC 4880 4.3) of a signed message's top level.
const (
	tagSignature        = 2
	tagOnePassSignature = 4
	tagCompressed       = 8
	tagLiteralData      = 11
)

// checkMessageShape holds the blob to one "Signed Message" (RFC 4880 11.3) and nothing after
// it: one compressed packet (gpg --sign's form) or one-pass signature, literal data,
// signature. go-crypto's reader stops at the first message and ignores what follows.
func checkMessageShape(blob []byte) error {
	r := packet.NewOpaqueReader(bytes.NewReader(blob))
	var tags []uint8
	for {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not an OpenPGP signed message: %w", err)
		}
		if tags = append(tags, p.Tag); len(tags) > 3 {
			break
		}
	}
	ok := (len(tags) == 1 && tags[0] == tagCompressed) ||
		(len(tags) == 3 && tags[0] == tagOnePassSignature && tags[1] == tagLiteralData && tags[2] == tagSignature)
	if !ok {
		return fmt.Errorf("not an OpenPGP signed message (packets %v; expected one compressed message or a one-pass signature, literal data and a signature)", tags)
	}
	return nil
}

// keyOf finds the policy key of an OpenPGP entity.
func keyOf(keys []*Key, e *openpgp.Entity) *Key {
	for _, k := range keys {
		if k.entity == e {
			return k
		}
	}
	return nil
}

// verifyCosign checks a cosign signature (the base64 signature annotation of a .sig layer)
// over payload with each sigstore key as sigstore's verifiers do — RSA PKCS#1 v1.5 and ECDSA
// (ASN.1) over SHA-256, Ed25519 over the payload — then parses the payload.
func verifyCosign(payload []byte, sigB64 string, keys []*Key) (claim, *Key, error) {
	if len(payload) > MaxSignatureSize {
		return claim{}, nil, fmt.Errorf("a payload of %d bytes, more than a signature may have (%d)", len(payload), MaxSignatureSize)
	}
	if strings.TrimSpace(sigB64) == "" {
		return claim{}, nil, fmt.Errorf("no signature: the layer's %s annotation is missing or empty", CosignSignatureAnnotation)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sigB64))
	if err != nil {
		return claim{}, nil, fmt.Errorf("the signature annotation %s is not base64: %v", CosignSignatureAnnotation, err)
	}
	h := sha256.Sum256(payload)
	for _, k := range keys {
		var ok bool
		switch pub := k.public.(type) {
		case *rsa.PublicKey:
			ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig) == nil
		case *ecdsa.PublicKey:
			ok = ecdsa.VerifyASN1(pub, h[:], sig)
		case ed25519.PublicKey:
			ok = ed25519.Verify(pub, payload, sig)
		}
		if ok {
			c, err := parsePayload(payload, cosignType)
			return c, k, err
		}
	}
	return claim{}, nil, errNoKey
}

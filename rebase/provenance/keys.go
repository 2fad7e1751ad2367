package provenance

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"embed"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// Key formats.
const (
	// FormatOpenPGP keys verify atomic container signatures (signedBy).
	FormatOpenPGP = "openpgp"
	// FormatSigstore keys verify cosign signatures (sigstoreSigned).
	FormatSigstore = "sigstore"
)

// Classes of the keys lvms-rebase knows, for saying plainly what signed a digest.
const (
	ClassRedHat     = "redhat"      // Red Hat release keys: GA/RC payloads, registry.redhat.io images
	ClassRedHatBeta = "redhat-beta" // Red Hat beta key: EC and preview payloads
	ClassCI         = "openshift-ci"
)

// Key is one trusted public key of a policy.
type Key struct {
	// Format is FormatOpenPGP or FormatSigstore.
	Format string
	// Fingerprint identifies the key: the OpenPGP fingerprint in upper-case hex, or for a
	// sigstore key "sha256:<hex>" of its PKIX (DER) encoding.
	Fingerprint string
	// Name is the key's known name, else its OpenPGP user ID ("" for an unknown sigstore key).
	Name string
	// Class is one of the Class* constants for a key lvms-rebase knows, else "".
	Class string
	// Expires is when the key stops being valid (zero: never).
	Expires time.Time
	// Source is where the key was read from, for messages.
	Source string

	entity *openpgp.Entity
	public crypto.PublicKey
}

// Label is the key in messages: its name and fingerprint.
func (k *Key) Label() string {
	if k.Name == "" {
		return k.Fingerprint
	}
	return fmt.Sprintf("%s (%s)", k.Name, k.Fingerprint)
}

// known are the keys of Red Hat and OpenShift CI, by fingerprint (rebase/provenance/keys).
var known = map[string]struct{ name, class string }{
	"567E347AD0044ADE55BA8A5F199E2F91FD431D51":                                {"Red Hat release key 2", ClassRedHat},
	"B08B659EE86AF623BC90E8DB938A80CAF21541EB":                                {"Red Hat beta key 2", ClassRedHatBeta},
	"6A9588F07F2D3AE7973AD2A9193E53CCD2E2F7A4":                                {"OpenShift CI key openshift-ci-4", ClassCI},
	"sha256:ba9d26350d78893a20f337e2153a113108bfcf064085afaee60d446e63405576": {"Red Hat release key 3", ClassRedHat},
}

func (k *Key) identify(userID string) {
	if kn, ok := known[k.Fingerprint]; ok {
		k.Name, k.Class = kn.name, kn.class
		return
	}
	k.Name = userID
}

// ParseOpenPGPKeys reads an OpenPGP keyring, armored (text before the armor, as in
// cluster-update-keys' files, is skipped) or binary, of public keys only.
func ParseOpenPGPKeys(data []byte, source string) ([]*Key, error) {
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		return nil, fmt.Errorf("%s holds a private key; a policy trusts public keys only", source)
	}
	var el openpgp.EntityList
	var err error
	if i := bytes.Index(data, []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----")); i >= 0 {
		el, err = openpgp.ReadArmoredKeyRing(bytes.NewReader(data[i:]))
	} else {
		el, err = openpgp.ReadKeyRing(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not an OpenPGP public keyring: %w", source, err)
	}
	if len(el) == 0 {
		return nil, fmt.Errorf("%s: no OpenPGP key", source)
	}
	keys := make([]*Key, 0, len(el))
	for _, e := range el {
		if e.PrivateKey != nil {
			return nil, fmt.Errorf("%s holds a private key; a policy trusts public keys only", source)
		}
		k := &Key{Format: FormatOpenPGP, Fingerprint: strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)), Source: source, entity: e}
		uid := ""
		if sig, id := e.PrimarySelfSignature(); sig != nil {
			if id != nil {
				uid = id.Name
			}
			if sig.KeyLifetimeSecs != nil && *sig.KeyLifetimeSecs != 0 {
				k.Expires = e.PrimaryKey.CreationTime.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second)
			}
		}
		k.identify(uid)
		keys = append(keys, k)
	}
	return keys, nil
}

// ParseSigstoreKey reads a PEM "PUBLIC KEY" (PKIX: RSA, ECDSA or Ed25519), as cosign and
// containers/image take it; text before the PEM block is skipped.
func ParseSigstoreKey(data []byte, source string) (*Key, error) {
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		return nil, fmt.Errorf("%s holds a private key; a policy trusts public keys only", source)
	}
	i := bytes.Index(data, []byte("-----BEGIN PUBLIC KEY-----"))
	if i < 0 {
		return nil, fmt.Errorf("%s: no PEM \"PUBLIC KEY\" block", source)
	}
	block, _ := pem.Decode(data[i:])
	if block == nil {
		return nil, fmt.Errorf("%s: a malformed PEM block", source)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	switch pub.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("%s: a %T key; expected RSA, ECDSA or Ed25519", source, pub)
	}
	sum := sha256.Sum256(block.Bytes)
	k := &Key{Format: FormatSigstore, Fingerprint: "sha256:" + hex.EncodeToString(sum[:]), Source: source, public: pub}
	k.identify("")
	return k, nil
}

//go:embed builtin-policy.json keys/*.asc keys/*.pub
var embedded embed.FS

// BuiltinSource is the Source and Digest of the built-in policy.
const BuiltinSource = "built-in"

// builtin is parsed once; it cannot fail unless the embedded files are broken
// (TestBuiltinPolicy).
var builtin = sync.OnceValues(func() (*Policy, error) {
	data, err := embedded.ReadFile("builtin-policy.json")
	if err != nil {
		return nil, err
	}
	p, err := ParsePolicy(data, BuiltinSource, embedded)
	if err != nil {
		return nil, err
	}
	p.Digest = BuiltinSource
	return p, nil
})

// Builtin is the policy used without a policy file: every digest a rebase writes must be
// signed — OCP payloads of quay.io/openshift-release-dev/ocp-release by Red Hat release key 2
// or beta key 2 (atomic signatures in the signature stores), CI nightlies of
// registry.ci.openshift.org by openshift-ci-4, registry.redhat.io images by Red Hat release key
// 3 (cosign, as MicroShift's nodes check them); anything else is rejected.
func Builtin() (*Policy, error) { return builtin() }

// BuiltinJSON is the built-in policy document, for documentation and `--help`-like output.
func BuiltinJSON() []byte {
	b, _ := embedded.ReadFile("builtin-policy.json")
	return b
}

// errNoKey is a signature made by a key the requirement does not trust.
var errNoKey = errors.New("not signed by a trusted key")

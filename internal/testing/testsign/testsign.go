// Package testsign makes signatures for tests and the demo with keys generated when they run
// (no private key is ever committed): OpenPGP "atomic container signatures" as the signature
// stores serve them and cosign simple-signing signatures as .sig manifests attach them, plus a
// containers-policy.json(5) that trusts the keys where the built-in policy trusts Red Hat's
// and OpenShift CI's. It writes the formats from their specifications
// (containers-signature(5), cosign's simple signing), independently of rebase/provenance,
// which reads them.
package testsign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Payload types (critical.type).
const (
	AtomicType = "atomic container signature"
	CosignType = "cosign container image signature"
)

// Cosign's .sig manifest vocabulary.
const (
	CosignLayerType      = "application/vnd.dev.cosign.simplesigning.v1+json"
	CosignAnnotation     = "dev.cosignproject.cosign/signature"
	ociManifestMediaType = "application/vnd.oci.image.manifest.v1+json"
	ociConfigMediaType   = "application/vnd.oci.image.config.v1+json"
)

// epoch is when test keys are made and sign: a fixed time, so a key signs a payload into the
// same bytes every time.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Keys play Red Hat's and OpenShift CI's keys in tests.
type Keys struct {
	// Release signs payloads (atomic), as Red Hat release key 2 does.
	Release *openpgp.Entity
	// CI signs nightlies (atomic), as openshift-ci-4 does.
	CI *openpgp.Entity
	// Cosign signs registry images (.sig), as Red Hat release key 3 does.
	Cosign ed25519.PrivateKey
}

// Generate makes fresh keys (EdDSA OpenPGP keys and an Ed25519 cosign key: fast to make,
// deterministic signatures).
func Generate() (*Keys, error) {
	rel, err := NewOpenPGP("lvms-rebase test release key", 0, epoch)
	if err != nil {
		return nil, err
	}
	ci, err := NewOpenPGP("lvms-rebase test CI key", 0, epoch)
	if err != nil {
		return nil, err
	}
	_, cos, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Keys{Release: rel, CI: ci, Cosign: cos}, nil
}

// Shared are keys generated once per process, for the tests' fixture registries.
var Shared = sync.OnceValue(func() *Keys {
	k, err := Generate()
	if err != nil {
		panic(fmt.Sprintf("testsign: generating keys: %v", err))
	}
	return k
})

// NewOpenPGP makes an EdDSA OpenPGP key named name, created at created, valid for lifetime
// (0: no expiry).
func NewOpenPGP(name string, lifetime time.Duration, created time.Time) (*openpgp.Entity, error) {
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created },
		KeyLifetimeSecs: uint32(lifetime / time.Second)}
	return openpgp.NewEntity(name, "", "test@lvms-rebase.invalid", cfg)
}

// Payload is a simple-signing payload of type typ signing digest as identity.
func Payload(typ, digest, identity string) []byte {
	b, _ := json.Marshal(map[string]any{
		"critical": map[string]any{
			"type":     typ,
			"image":    map[string]string{"docker-manifest-digest": digest},
			"identity": map[string]string{"docker-reference": identity},
		},
		"optional": map[string]any{"creator": "lvms-rebase testsign"},
	})
	return b
}

// SignMessage makes an OpenPGP signed message (binary, compressed as gpg --sign does) of
// payload by e, at the key's creation time plus a minute.
func SignMessage(e *openpgp.Entity, payload []byte) ([]byte, error) {
	at := e.PrimaryKey.CreationTime.Add(time.Minute)
	cfg := &packet.Config{Time: func() time.Time { return at }, DefaultCompressionAlgo: packet.CompressionZLIB}
	var buf bytes.Buffer
	w, err := openpgp.Sign(&buf, e, nil, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(payload); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Atomic is an atomic container signature by e of digest as identity.
func Atomic(e *openpgp.Entity, digest, identity string) ([]byte, error) {
	return SignMessage(e, Payload(AtomicType, digest, identity))
}

// Layer is one layer of a .sig manifest: a payload and its base64 signature.
type Layer struct {
	Payload   []byte
	Signature string
	// MediaType defaults to CosignLayerType.
	MediaType string
}

// Cosign is a cosign signature layer by k of digest as identity.
func Cosign(k ed25519.PrivateKey, digest, identity string) Layer {
	return SignLayer(k, Payload(CosignType, digest, identity))
}

// SignLayer signs an arbitrary payload as cosign does with an Ed25519 key.
func SignLayer(k ed25519.PrivateKey, payload []byte) Layer {
	return Layer{Payload: payload, Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(k, payload))}
}

// SigManifest is a .sig manifest holding layers, with the blobs it references (config and
// payloads) by digest.
func SigManifest(layers []Layer) (manifest []byte, blobs map[string][]byte) {
	blobs = map[string][]byte{}
	put := func(b []byte) (string, int) {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = b
		return d, len(b)
	}
	cfgDigest, cfgSize := put([]byte(`{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":[]}}`))
	type desc struct {
		MediaType   string            `json:"mediaType"`
		Size        int               `json:"size"`
		Digest      string            `json:"digest"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	m := struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		Config        desc   `json:"config"`
		Layers        []desc `json:"layers"`
	}{SchemaVersion: 2, MediaType: ociManifestMediaType, Config: desc{MediaType: ociConfigMediaType, Size: cfgSize, Digest: cfgDigest}, Layers: []desc{}}
	for _, l := range layers {
		d, n := put(l.Payload)
		mt := l.MediaType
		if mt == "" {
			mt = CosignLayerType
		}
		m.Layers = append(m.Layers, desc{MediaType: mt, Size: n, Digest: d, Annotations: map[string]string{CosignAnnotation: l.Signature}})
	}
	manifest, _ = json.Marshal(m)
	return manifest, blobs
}

// ArmoredPublic is e's public key, armored.
func ArmoredPublic(e *openpgp.Entity) []byte {
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		panic(err)
	}
	if err := e.Serialize(w); err != nil {
		panic(err)
	}
	_ = w.Close()
	return buf.Bytes()
}

// PublicPEM is a cosign key's public key as a PEM "PUBLIC KEY".
func PublicPEM(k ed25519.PrivateKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Policy is a containers-policy.json(5) trusting these keys where the built-in policy trusts
// Red Hat's and OpenShift CI's: Release for quay.io/openshift-release-dev/ocp-release, CI for
// registry.ci.openshift.org, Cosign for registry.redhat.io; anything else is rejected.
func (k *Keys) Policy() []byte {
	data := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	p := map[string]any{
		"default": []any{map[string]string{"type": "reject"}},
		"transports": map[string]any{"docker": map[string]any{
			"quay.io/openshift-release-dev/ocp-release": []any{map[string]string{"type": "signedBy", "keyType": "GPGKeys", "keyData": data(ArmoredPublic(k.Release))}},
			"registry.ci.openshift.org":                 []any{map[string]string{"type": "signedBy", "keyType": "GPGKeys", "keyData": data(ArmoredPublic(k.CI))}},
			"registry.redhat.io":                        []any{map[string]string{"type": "sigstoreSigned", "keyData": data(PublicPEM(k.Cosign))}},
		}},
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	return append(b, '\n')
}

// WritePolicy writes Policy to path.
func (k *Keys) WritePolicy(path string) error { return os.WriteFile(path, k.Policy(), 0o644) }

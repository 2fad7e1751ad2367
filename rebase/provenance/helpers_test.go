package provenance

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"testing"
)

func base64StdEncoding(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// cosignKey is a sigstore public key (PEM) and how its private half signs a payload.
type cosignKey struct {
	pub  []byte
	sign func(payload []byte) string
}

// cosignKeys are keys of each type cosign supports, generated now.
func cosignKeys(t *testing.T) map[string]cosignKey {
	t.Helper()
	pemOf := func(pub crypto.PublicKey) []byte {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, dk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	return map[string]cosignKey{
		"rsa": {pemOf(&rk.PublicKey), func(p []byte) string {
			h := sha256.Sum256(p)
			s, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, h[:])
			if err != nil {
				t.Fatal(err)
			}
			return b64(s)
		}},
		"ecdsa": {pemOf(&ek.PublicKey), func(p []byte) string {
			h := sha256.Sum256(p)
			s, err := ecdsa.SignASN1(rand.Reader, ek, h[:])
			if err != nil {
				t.Fatal(err)
			}
			return b64(s)
		}},
		"ed25519": {pemOf(dk.Public()), func(p []byte) string { return b64(ed25519.Sign(dk, p)) }},
	}
}

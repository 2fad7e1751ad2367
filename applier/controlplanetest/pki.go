package controlplanetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiFiles are the generated credentials: file paths for kube-apiserver, PEM for the client.
type pkiFiles struct {
	caCert, servingCert, servingKey, saKey string
	caPEM, adminCertPEM, adminKeyPEM       []byte
}

// writePKI creates a CA, a serving certificate for 127.0.0.1, a system:masters client
// certificate and the service-account signing key under dir/pki.
func writePKI(dir string) (*pkiFiles, error) {
	d := filepath.Join(dir, "pki")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", d, err)
	}
	caKey, caDER, err := newCert(nil, nil, x509.Certificate{
		Subject: pkix.Name{CommonName: "applier-test-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parsing test CA: %w", err)
	}
	servKey, servDER, err := newCert(ca, caKey, x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return nil, err
	}
	adminKey, adminDER, err := newCert(ca, caKey, x509.Certificate{
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	p := &pkiFiles{
		caCert: filepath.Join(d, "ca.crt"), servingCert: filepath.Join(d, "apiserver.crt"),
		servingKey: filepath.Join(d, "apiserver.key"), saKey: filepath.Join(d, "sa.key"),
		caPEM: certPEM(caDER), adminCertPEM: certPEM(adminDER), adminKeyPEM: keyPEM(adminKey),
	}
	saPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})
	for path, data := range map[string][]byte{
		p.caCert: p.caPEM, p.servingCert: certPEM(servDER), p.servingKey: keyPEM(servKey), p.saKey: saPEM,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return p, nil
}

// newCert creates an ECDSA key and a certificate from tmpl, self-signed when parent is nil.
func newCert(parent *x509.Certificate, parentKey *ecdsa.PrivateKey, tmpl x509.Certificate) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key for %s: %w", tmpl.Subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = &tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return key, der, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for unsupported curves; P-256 is supported
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

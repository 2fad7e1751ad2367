package provenance

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
)

// fakeFetcher serves signatures from memory and counts requests.
type fakeFetcher struct {
	mu      sync.Mutex
	store   map[string][]byte // StoreURL → file
	stale   map[string][]byte // StoreURL → a cached copy served unless fresh
	sigs    map[string]*Attachments
	down    bool
	fetches int
}

func newFake() *fakeFetcher {
	return &fakeFetcher{store: map[string][]byte{}, stale: map[string][]byte{}, sigs: map[string]*Attachments{}}
}

func (f *fakeFetcher) StoreSignature(_ context.Context, store, digest string, n int, fresh bool) ([]byte, bool, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if f.down {
		return nil, false, false, errors.New("connection refused")
	}
	u := StoreURL(store, digest, n)
	if b, ok := f.stale[u]; ok && !fresh {
		return b, true, true, nil
	}
	b, ok := f.store[u]
	return b, ok, false, nil
}

func (f *fakeFetcher) Attachments(_ context.Context, repo, digest, sigDigest string, fresh bool) (*Attachments, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if f.down {
		return nil, errors.New("connection refused")
	}
	a, ok := f.sigs[repo+"@"+digest]
	if !ok || (sigDigest != "" && a.Digest != sigDigest) {
		return nil, nil
	}
	return a, nil
}

// attach puts cosign layers on repo@digest.
func (f *fakeFetcher) attach(repo, digest string, layers ...testsign.Layer) {
	a := &Attachments{Digest: "sha256:" + strings.Repeat("5", 64)}
	for _, l := range layers {
		mt := l.MediaType
		if mt == "" {
			mt = CosignPayloadMediaType
		}
		a.Layers = append(a.Layers, Attachment{MediaType: mt, Payload: l.Payload, Signature: l.Signature})
	}
	f.sigs[repo+"@"+digest] = a
}

func dg(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

const (
	relRepo    = "quay.io/openshift-release-dev/ocp-release"
	bundleRepo = "registry.redhat.io/lvms4/lvms-operator-bundle"
)

// testPolicy is the fixture policy of keys, parsed.
func testPolicy(t *testing.T, keys *testsign.Keys) *Policy {
	t.Helper()
	p, err := ParsePolicy(keys.Policy(), "test-policy.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func payloadSubject(digest string) Subject {
	return Subject{Role: "payload x86_64", Ref: relRepo + ":4.18.12-x86_64", Repository: relRepo, Digest: digest,
		Version: &VersionRule{Want: "a tag of 4.18.12 for x86_64", Accept: func(tag string) bool { return tag == "4.18.12-x86_64" || tag == "4.18.12-multi" }}}
}

func bundleSubject(digest string) Subject {
	return Subject{Role: "bundle", Ref: bundleRepo + ":v4.18.4-2", Repository: bundleRepo, Digest: digest,
		Version: &VersionRule{Want: "the tag v4.18.4-2", Accept: func(tag string) bool { return tag == "v4.18.4-2" }}}
}

func mustAtomic(t *testing.T, e *openpgp.Entity, digest, identity string) []byte {
	t.Helper()
	b, err := testsign.Atomic(e, digest, identity)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerify runs every case the issue names, for atomic (payload) and cosign (bundle)
// signatures, through the same model.
func TestVerify(t *testing.T) {
	keys := testsign.Shared()
	other, err := testsign.Generate()
	if err != nil {
		t.Fatal(err)
	}
	expired, err := testsign.NewOpenPGP("expired", 24*time.Hour, time.Now().Add(-48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pd, ld, bd := dg('1'), dg('2'), dg('3')
	official := StoreURL(OfficialStore, pd, 1)
	type setup func(f *fakeFetcher)
	cases := []struct {
		name     string
		subject  Subject
		setup    setup
		policy   func(t *testing.T) *Policy
		allow    bool
		want     string // "" = signed; else a substring of the error
		wantRec  func(t *testing.T, r Record)
		unsigned bool
	}{
		{name: "payload valid", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.12-x86_64")
		}, wantRec: func(t *testing.T, r Record) {
			s := r.Signatures[0]
			if s.Format != FormatAtomic || s.Store != OfficialStore || s.N != 1 || s.Identity != relRepo+":4.18.12-x86_64" || s.SignedDigest != "" || len(s.SHA256) != 64 {
				t.Errorf("signature %+v", s)
			}
		}},
		{name: "payload signature 2 valid after an invalid 1", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = []byte("garbage")
			f.store[StoreURL(OfficialStore, pd, 2)] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.12-x86_64")
		}, wantRec: func(t *testing.T, r Record) {
			if r.Signatures[0].N != 2 {
				t.Errorf("n = %d", r.Signatures[0].N)
			}
		}},
		{name: "a stale cached signature is fetched again", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.stale[official] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.11-x86_64")
			f.store[official] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.12-x86_64")
		}, wantRec: func(t *testing.T, r Record) {
			if r.Signatures[0].N != 1 {
				t.Errorf("n = %d", r.Signatures[0].N)
			}
		}},
		{name: "payload in the mirror store only", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[StoreURL(OfficialMirrorStore, pd, 1)] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.12-x86_64")
		}, wantRec: func(t *testing.T, r Record) {
			if r.Signatures[0].Store != OfficialMirrorStore {
				t.Errorf("store %s", r.Signatures[0].Store)
			}
		}},
		{name: "payload list signed", subject: func() Subject { s := payloadSubject(pd); s.Alternates = []string{ld}; return s }(), setup: func(f *fakeFetcher) {
			f.store[StoreURL(OfficialStore, ld, 1)] = mustAtomic(t, keys.Release, ld, relRepo+":4.18.12-multi")
		}, wantRec: func(t *testing.T, r Record) {
			if r.Signatures[0].SignedDigest != ld {
				t.Errorf("signedDigest %q", r.Signatures[0].SignedDigest)
			}
		}},
		{name: "another digest", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.Release, dg('9'), relRepo+":4.18.12-x86_64")
		}, want: "signs " + dg('9') + ", not " + pd},
		{name: "another repository", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.Release, pd, "quay.io/evil/ocp-release:4.18.12-x86_64")
		}, want: "identity quay.io/evil/ocp-release:4.18.12-x86_64 does not match " + relRepo},
		{name: "another version", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.Release, pd, relRepo+":4.18.11-x86_64")
		}, want: "does not name a tag of 4.18.12 for x86_64"},
		{name: "untagged identity", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.Release, pd, relRepo)
		}, want: "does not name a tag of 4.18.12"},
		{name: "wrong key", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, other.Release, pd, relRepo+":4.18.12-x86_64")
		}, want: "not signed by a trusted key"},
		{name: "CI key for a named release", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, keys.CI, pd, relRepo+":4.18.12-x86_64")
		}, want: "not signed by a trusted key"},
		{name: "expired key", subject: payloadSubject(pd), policy: func(t *testing.T) *Policy {
			return policyWith(t, TypeSignedBy, testsign.ArmoredPublic(expired))
		}, setup: func(f *fakeFetcher) {
			f.store[official] = mustAtomic(t, expired, pd, relRepo+":4.18.12-x86_64")
		}, want: "every trusted key expired; expected an atomic signature"},
		{name: "no signature", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {}, want: "no signature; expected an atomic signature in " + OfficialStore},
		{name: "no signature allowed", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {}, allow: true, unsigned: true},
		{name: "garbage allowed", subject: payloadSubject(pd), setup: func(f *fakeFetcher) { f.store[official] = []byte{0x00, 0xff} }, allow: true, unsigned: true},
		{name: "garbage", subject: payloadSubject(pd), setup: func(f *fakeFetcher) { f.store[official] = []byte("\x89PNG garbage") }, want: "not an OpenPGP signed message"},
		{name: "oversized", subject: payloadSubject(pd), setup: func(f *fakeFetcher) { f.store[official] = make([]byte, MaxSignatureSize+1) }, want: "more than a signature may have"},
		{name: "armored", subject: payloadSubject(pd), setup: func(f *fakeFetcher) {
			f.store[official] = []byte("-----BEGIN PGP MESSAGE-----\n\nxx\n-----END PGP MESSAGE-----\n")
		}, want: "not an OpenPGP signed message"},
		{name: "store down", subject: payloadSubject(pd), setup: func(f *fakeFetcher) { f.down = true }, want: "signatures could not be fetched"},
		{name: "store down allowed is still an error", subject: payloadSubject(pd), allow: true, setup: func(f *fakeFetcher) { f.down = true }, want: "connection refused"},
		{name: "bundle valid", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Cosign(keys.Cosign, bd, bundleRepo+":v4.18.4-2"))
		}, wantRec: func(t *testing.T, r Record) {
			s := r.Signatures[0]
			if s.Format != FormatCosign || s.Layer != 1 || s.Sig == "" || s.Identity != bundleRepo+":v4.18.4-2" {
				t.Errorf("signature %+v", s)
			}
		}},
		{name: "bundle floating tag only", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Cosign(keys.Cosign, bd, bundleRepo+":v4.18"), testsign.Cosign(keys.Cosign, bd, bundleRepo+":latest"))
		}, want: "does not name the tag v4.18.4-2"},
		{name: "bundle floating then exact", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Cosign(keys.Cosign, bd, bundleRepo+":v4.18"), testsign.Cosign(keys.Cosign, bd, bundleRepo+":v4.18.4-2"))
		}, wantRec: func(t *testing.T, r Record) {
			if r.Signatures[0].Layer != 2 {
				t.Errorf("layer %d", r.Signatures[0].Layer)
			}
		}},
		{name: "bundle wrong key", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Cosign(other.Cosign, bd, bundleRepo+":v4.18.4-2"))
		}, want: "not signed by a trusted key"},
		{name: "bundle another digest", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Cosign(keys.Cosign, dg('8'), bundleRepo+":v4.18.4-2"))
		}, want: "signs " + dg('8')},
		{name: "bundle garbage signature", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Layer{Payload: testsign.Payload(testsign.CosignType, bd, bundleRepo+":v4.18.4-2"), Signature: "!!"})
		}, want: "not base64"},
		{name: "bundle layer without a signature", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Layer{Payload: testsign.Payload(testsign.CosignType, bd, bundleRepo+":v4.18.4-2")})
		}, want: "annotation is missing or empty"},
		{name: "bundle other layer type", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.Layer{Payload: []byte("{}"), Signature: "AA==", MediaType: "application/json"})
		}, want: `media type "application/json"`},
		{name: "bundle atomic type in a cosign payload", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {
			f.attach(bundleRepo, bd, testsign.SignLayer(keys.Cosign, testsign.Payload(testsign.AtomicType, bd, bundleRepo+":v4.18.4-2")))
		}, want: `critical.type "atomic container signature"`},
		{name: "bundle no .sig", subject: bundleSubject(bd), setup: func(f *fakeFetcher) {}, want: "no signature; expected a cosign signature (" + bundleRepo + ":sha256-"},
		{name: "rejected by the policy", subject: Subject{Role: "image", Repository: "quay.io/lvms_dev/x", Digest: bd}, setup: func(f *fakeFetcher) {},
			want: "rejected by the policy"},
		{name: "rejected allowed", subject: Subject{Role: "image", Repository: "quay.io/lvms_dev/x", Digest: bd}, setup: func(f *fakeFetcher) {}, allow: true, unsigned: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			c.setup(f)
			p := testPolicy(t, keys)
			if c.policy != nil {
				p = c.policy(t)
			}
			v, err := New(Options{Policy: p, AllowUnsigned: c.allow, Stores: storesFor(c.subject)}, f)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := v.Verify(context.Background(), c.subject)
			if c.want != "" {
				var ve *Error
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ve) {
					t.Fatalf("err = %v, want an *Error with %q", err, c.want)
				}
				if !strings.Contains(err.Error(), c.subject.Repository+"@"+c.subject.Digest) || !strings.Contains(err.Error(), c.subject.Role) {
					t.Errorf("the error does not name the image and digest: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.unsigned {
				if rec.Status != StatusUnsigned || !strings.HasPrefix(rec.Reason, "allowed unsigned: ") {
					t.Errorf("record %+v, want unsigned with a reason", rec)
				}
				return
			}
			if rec.Status != StatusSigned || len(rec.Signatures) != 1 || rec.Digest != c.subject.Digest {
				t.Fatalf("record %+v", rec)
			}
			if c.wantRec != nil {
				c.wantRec(t, rec)
			}
		})
	}
}

// storesFor keeps the default stores for the payload cases.
func storesFor(Subject) []string { return nil }

// policyWith is a policy whose ocp-release and registry.redhat.io scopes trust one key.
func policyWith(t *testing.T, typ string, key []byte) *Policy {
	t.Helper()
	kt := ""
	if typ == TypeSignedBy {
		kt = `"keyType": "GPGKeys", `
	}
	doc := fmt.Sprintf(`{"default": [{"type": "reject"}], "transports": {"docker": {
		%q: [{"type": %q, %s"keyData": %q}]}}}`, relRepo, typ, kt, b64(key))
	p, err := ParsePolicy([]byte(doc), "p.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyOnce: concurrent and repeated verifications of a subject fetch once; a warm
// verifier fetches nothing.
func TestVerifyOnce(t *testing.T) {
	keys := testsign.Shared()
	f := newFake()
	d := dg('4')
	f.store[StoreURL(OfficialStore, d, 1)] = mustAtomic(t, keys.Release, d, relRepo+":4.18.12-x86_64")
	v, err := New(Options{Policy: testPolicy(t, keys)}, f)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), payloadSubject(d)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if f.fetches != 1 {
		t.Errorf("%d fetches for one subject verified 8 times, want 1", f.fetches)
	}
}

// TestVerifyHints: a recorded location is read first (the lock's, with --check), so a store
// holding several signatures answers with the recorded one.
func TestVerifyHints(t *testing.T) {
	keys := testsign.Shared()
	f := newFake()
	d := dg('6')
	good := mustAtomic(t, keys.Release, d, relRepo+":4.18.12-x86_64")
	f.store[StoreURL(OfficialStore, d, 1)] = good
	f.store[StoreURL(OfficialStore, d, 3)] = good
	v, err := New(Options{Policy: testPolicy(t, keys)}, f)
	if err != nil {
		t.Fatal(err)
	}
	s := payloadSubject(d)
	s.Hints = []Signature{{Format: FormatAtomic, Store: OfficialStore, N: 3}}
	rec, err := v.Verify(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Signatures[0].N != 3 || f.fetches != 1 {
		t.Errorf("n = %d after %d fetches, want the hinted 3 after 1", rec.Signatures[0].N, f.fetches)
	}
}

// TestMaxSignatures: a store that has a signature for every N is read up to the cap.
func TestMaxSignatures(t *testing.T) {
	keys := testsign.Shared()
	f := newFake()
	d := dg('7')
	bad := mustAtomic(t, keys.Release, dg('0'), relRepo+":4.18.12-x86_64")
	for n := 1; n <= 40; n++ {
		f.store[StoreURL(OfficialStore, d, n)] = bad
	}
	v, err := New(Options{Policy: testPolicy(t, keys), Stores: []string{OfficialStore}, MaxSignatures: 5}, f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), payloadSubject(d))
	if err == nil || !strings.Contains(err.Error(), "stopped after 5 signatures") || f.fetches != 5 {
		t.Errorf("err %v after %d fetches", err, f.fetches)
	}
}

// TestPolicyRequirements: insecureAcceptAnything records an unsigned digest with its reason;
// two requirements both need their signature.
func TestPolicyRequirements(t *testing.T) {
	keys := testsign.Shared()
	d := dg('a')
	accept, err := ParsePolicy([]byte(`{"default": [{"type": "insecureAcceptAnything"}]}`), "any.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := New(Options{Policy: accept}, newFake())
	rec, err := v.Verify(context.Background(), bundleSubject(d))
	if err != nil || rec.Status != StatusUnsigned || !strings.Contains(rec.Reason, "insecureAcceptAnything") {
		t.Errorf("accept anything: %+v, %v", rec, err)
	}
	both := fmt.Sprintf(`{"default": [{"type": "reject"}], "transports": {"docker": {%q: [
		{"type": "signedBy", "keyType": "GPGKeys", "keyData": %q},
		{"type": "sigstoreSigned", "keyData": %q}]}}}`, bundleRepo, b64(testsign.ArmoredPublic(keys.Release)), b64(testsign.PublicPEM(keys.Cosign)))
	p, err := ParsePolicy([]byte(both), "both.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.attach(bundleRepo, d, testsign.Cosign(keys.Cosign, d, bundleRepo+":v4.18.4-2"))
	v, _ = New(Options{Policy: p, Stores: []string{"https://sigs.example.com/store"}}, f)
	if _, err := v.Verify(context.Background(), bundleSubject(d)); err == nil || !strings.Contains(err.Error(), "no signature; expected an atomic signature in https://sigs.example.com/store") {
		t.Errorf("only one of two requirements met: %v", err)
	}
	f.store[StoreURL("https://sigs.example.com/store", d, 1)] = mustAtomic(t, keys.Release, d, bundleRepo+":v4.18.4-2")
	v, _ = New(Options{Policy: p, Stores: []string{"https://sigs.example.com/store"}}, f)
	rec, err = v.Verify(context.Background(), bundleSubject(d))
	if err != nil || len(rec.Signatures) != 2 {
		t.Errorf("both met: %+v, %v", rec, err)
	}
}

// TestExpiryWarning: a trusted key that expires within 60 days is a warning, once.
func TestExpiryWarning(t *testing.T) {
	soon, err := testsign.NewOpenPGP("soon", 30*24*time.Hour, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	d := dg('b')
	f := newFake()
	f.store[StoreURL(OfficialStore, d, 1)] = mustAtomic(t, soon, d, relRepo+":4.18.12-x86_64")
	v, _ := New(Options{Policy: policyWith(t, TypeSignedBy, testsign.ArmoredPublic(soon))}, f)
	for range 2 {
		if _, err := v.Verify(context.Background(), payloadSubject(d)); err != nil {
			t.Fatal(err)
		}
	}
	if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], "expires on") || !strings.Contains(w[0], "in 29 days") {
		t.Errorf("warnings %q", w)
	}
}

// TestRealCIKeyExpiry: after 2027-03-31 the built-in CI key verifies nothing, and the error
// names it; 30 days before, it is a warning.
func TestRealCIKeyExpiry(t *testing.T) {
	d := dg('c')
	s := Subject{Role: "payload x86_64", Repository: "registry.ci.openshift.org/ocp/release", Digest: d}
	v, _ := New(Options{Now: func() time.Time { return time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC) }}, newFake())
	if _, err := v.Verify(context.Background(), s); err == nil || !strings.Contains(err.Error(), "OpenShift CI key openshift-ci-4 (6A9588F07F2D3AE7973AD2A9193E53CCD2E2F7A4) expired on 2027-03-31") {
		t.Errorf("err %v", err)
	}
	v, _ = New(Options{Now: func() time.Time { return time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC) }}, newFake())
	_, _ = v.Verify(context.Background(), s)
	if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], "openshift-ci-4") {
		t.Errorf("warnings %q", w)
	}
}

// TestPayloadStrict: the signed JSON is parsed as containers-signature(5) asks.
func TestPayloadStrict(t *testing.T) {
	d := dg('d')
	for _, c := range []struct{ name, doc, want string }{
		{"valid", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{"creator":"x","future":1}}`, ""},
		{"optional null", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":null}`, ""},
		{"no optional", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}}}`, "no optional"},
		{"optional string", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":"x"}`, "not an object"},
		{"extra top", `{"critical":{},"optional":{},"x":1}`, `unknown member "x"`},
		{"extra critical", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"},"x":1},"optional":{}}`, `unknown field "x"`},
		{"extra image", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `","x":1},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, `unknown field "x"`},
		{"duplicate digest", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `","docker-manifest-digest":"` + dg('e') + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, "duplicate field"},
		{"duplicate critical", `{"critical":{},"critical":{},"optional":{}}`, "duplicate field"},
		{"wrong type", `{"critical":{"type":"cosign container image signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, "critical.type"},
		{"number type", `{"critical":{"type":1,"image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, "cannot unmarshal"},
		{"no digest", `{"critical":{"type":"atomic container signature","image":{},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, "docker-manifest-digest missing"},
		{"bad digest", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"md5:00"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, "docker-manifest-digest \"md5:00\""},
		{"case", `{"critical":{"Type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"x.io/a:1"}},"optional":{}}`, `unknown field "Type"`},
		{"bad reference", `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"},"identity":{"docker-reference":"X Y"}},"optional":{}}`, "docker-reference"},
	} {
		_, err := parsePayload([]byte(c.doc), atomicType)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

// TestAtomicMessageForms: only a binary OpenPGP signed message by one trusted key passes.
func TestAtomicMessageForms(t *testing.T) {
	keys := testsign.Shared()
	ring, err := ParseOpenPGPKeys(testsign.ArmoredPublic(keys.Release), "k")
	if err != nil {
		t.Fatal(err)
	}
	d := dg('f')
	payload := testsign.Payload(testsign.AtomicType, d, relRepo+":4.18.12-x86_64")
	signed, err := testsign.SignMessage(keys.Release, payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, k, err := verifyAtomic(signed, ring, time.Now()); err != nil || k.Fingerprint != ring[0].Fingerprint {
		t.Fatalf("valid: %v", err)
	}
	tampered := append([]byte(nil), signed...)
	tampered[len(tampered)/2] ^= 0x01
	if _, _, err := verifyAtomic(tampered, ring, time.Now()); err == nil {
		t.Error("a flipped byte verified")
	}
	if _, _, err := verifyAtomic(signed[:len(signed)-10], ring, time.Now()); err == nil {
		t.Error("a truncated message verified")
	}
	if _, _, err := verifyAtomic(append(append([]byte(nil), signed...), signed...), ring, time.Now()); err == nil {
		t.Error("two concatenated messages verified")
	}
	// A message whose body is huge once decompressed is refused (a compression bomb).
	bomb, err := testsign.SignMessage(keys.Release, make([]byte, 2*maxPayload))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := verifyAtomic(bomb, ring, time.Now()); err == nil {
		t.Error("a 128 KiB payload verified")
	}
}

// TestCosignKeyTypes: RSA, ECDSA and Ed25519 sigstore keys all verify, as sigstore's verifiers
// do; a signature by one key does not pass for another.
func TestCosignKeyTypes(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	for name, k := range cosignKeys(t) {
		d := dg('1')
		payload := testsign.Payload(testsign.CosignType, d, bundleRepo+":v1")
		key, err := ParseSigstoreKey(k.pub, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, _, err := verifyCosign(payload, k.sign(payload), []*Key{key}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, _, err := verifyCosign(payload, testsign.SignLayer(edKey, payload).Signature, []*Key{key}); !errors.Is(err, errNoKey) {
			t.Errorf("%s: a foreign signature: %v", name, err)
		}
	}
}

func b64(b []byte) string { return base64StdEncoding(b) }

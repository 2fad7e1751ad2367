package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

const (
	bundleRepo  = "registry.redhat.io/lvms4/lvms-operator-bundle"
	releaseRepo = "quay.io/openshift-release-dev/ocp-release"
)

// jsonResult is the part of a RebaseResult document these tests read; its provenance object
// has the lock's shape, read as provenance.Report.
type jsonResult struct {
	v1alpha1.RebaseResult
	Provenance *provenance.Report `json:"provenance"`
}

// runJSON runs a rebase with -o json and returns its result.
func runJSON(t *testing.T, e *e2e, dir string, args ...string) *jsonResult {
	t.Helper()
	code, out, errOut := e.run(dir, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res jsonResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	return &res
}

// TestProvenanceRecorded: a run names, for every digest it writes into release-<arch>.json and
// for the bundle and the payloads, the key and identity that signed it — in -o json, the lock
// and the PR body's Provenance section — and --check re-verifies the lock's signatures from
// the cache without the network, or from a fresh cache by what the lock recorded.
func TestProvenanceRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	for _, ocp := range []string{"4.14", "4.21"} {
		t.Run(ocp, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, "../../../testdata/microshift")
			body := filepath.Join(t.TempDir(), "pr.md")
			res := runJSON(t, e, dir, "--ocp", ocp, "--allow-base-mismatch", "--pr-body", body)
			rep := res.Provenance
			if rep == nil || rep.AllowUnsigned || len(rep.Unsigned()) != 0 {
				t.Fatalf("provenance %+v", rep)
			}
			pr, err := os.ReadFile(body)
			if err != nil {
				t.Fatal(err)
			}
			l, err := lock.Read(filepath.Join(dir, filepath.FromSlash(lock.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if l.Provenance == nil || len(l.Provenance.Records) != len(rep.Records) || l.Provenance.PolicyFile != "" {
				t.Fatalf("lock provenance %+v, want the run's %d records without the policy's path", l.Provenance, len(rep.Records))
			}
			find := func(image, digest string) *provenance.Record {
				for i, r := range rep.Records {
					if r.Image == image && r.Digest == digest {
						return &rep.Records[i]
					}
				}
				return nil
			}
			want := map[string]string{bundleRepo + "@" + res.Resolution.Bundle.Digest: "bundle"}
			for _, p := range res.Resolution.Payloads {
				want[releaseRepo+"@"+p.Digest] = "payload " + p.Arch
			}
			for a, imgs := range res.Images {
				for key, ref := range imgs {
					want[ref] = key + " " + a
				}
			}
			for ref, role := range want {
				at := strings.LastIndex(ref, "@")
				r := find(ref[:at], ref[at+1:])
				switch {
				case r == nil:
					t.Errorf("%s (%s): no provenance record", role, ref)
					continue
				case r.Status == provenance.StatusCovered:
					if !strings.HasPrefix(r.CoveredBy, releaseRepo+"@") {
						t.Errorf("%s: covered by %q", role, r.CoveredBy)
					}
				case r.Status != provenance.StatusSigned || len(r.Signatures) == 0 || r.Signatures[0].Key == "" || r.Signatures[0].Identity == "":
					t.Errorf("%s: %+v, want signed with a key and identity", role, r)
				}
				if !strings.Contains(string(pr), "`"+ref[at+1:]+"`") {
					t.Errorf("PR body's Provenance section lacks %s (%s)", role, ref)
				}
			}
			if !strings.Contains(string(pr), "### Provenance") || !strings.Contains(string(pr), "for identity") {
				t.Errorf("PR body:\n%s", pr)
			}
			// A warm run (same cache) sends no signature request: the store files and .sig
			// manifests it verified are in the cache.
			e.reg.ResetStats()
			if code, out, errOut := e.run(dir, "--ocp", ocp, "--allow-base-mismatch"); code != 0 || !strings.Contains(out, "no changes") {
				t.Fatalf("second run: exit %d\n%s\n%s", code, out, errOut)
			}
			if st := e.reg.Stats(); st.Requests("", "/signature-") != 0 || st.Requests("", ".sig") != 0 {
				t.Errorf("a warm run sent %d signature-store and %d .sig requests, want none", st.Requests("", "/signature-"), st.Requests("", ".sig"))
			}
			if code, out, errOut := e.run(dir, "--check", "--offline"); code != 0 {
				t.Fatalf("--check --offline: exit %d\n%s\n%s", code, out, errOut)
			}
			if code, out, errOut := e.run(dir, "--check", "--cache-dir", t.TempDir()); code != 0 {
				t.Fatalf("--check with a fresh cache: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// signingExcept signs as the registry does, except what f replaces (f returns false to keep
// the default for an image).
func signingExcept(reg *testregistry.Registry, f func(repo, digest string, tags []string) (testregistry.Signatures, bool)) testregistry.Signing {
	def := testregistry.DefaultSigning(reg.Keys())
	return func(repo, digest string, tags []string) testregistry.Signatures {
		if s, ok := f(repo, digest, tags); ok {
			return s
		}
		return def(repo, digest, tags)
	}
}

// TestProvenanceRefusals: every way a signature can fail stops the run before anything is
// written — non-zero exit, the tree byte-identical, an error naming the image and what was
// expected and found. A missing signature passes with --allow-unsigned, recorded as such.
func TestProvenanceRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	reg := e.reg
	keys := reg.Keys()
	other, err := testsign.Generate()
	if err != nil {
		t.Fatal(err)
	}
	expired, err := testsign.NewOpenPGP("expired release key", 24*time.Hour, time.Now().Add(-72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expiredPolicy := filepath.Join(t.TempDir(), "expired.json")
	if err := (&testsign.Keys{Release: expired, CI: keys.CI, Cosign: keys.Cosign}).WritePolicy(expiredPolicy); err != nil {
		t.Fatal(err)
	}
	atomic := func(e2 func(digest string, tags []string) []byte) testregistry.Signing {
		return signingExcept(reg, func(repo, digest string, tags []string) (testregistry.Signatures, bool) {
			if repo != releaseRepo {
				return testregistry.Signatures{}, false
			}
			return testregistry.Signatures{Atomic: [][]byte{e2(digest, tags)}}, true
		})
	}
	sign := func(en func(digest, identity string) ([]byte, error)) func(string, []string) []byte {
		return func(digest string, tags []string) []byte {
			b, err := en(digest, releaseRepo+":"+tags[0])
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	cosign := func(repoWant string, layer func(digest string, tags []string) []testsign.Layer) testregistry.Signing {
		return signingExcept(reg, func(repo, digest string, tags []string) (testregistry.Signatures, bool) {
			if repo != repoWant {
				return testregistry.Signatures{}, false
			}
			return testregistry.Signatures{Cosign: layer(digest, tags)}, true
		})
	}
	for _, c := range []struct {
		name    string
		signing testregistry.Signing
		fault   *testregistry.Fault
		args    []string
		want    []string
	}{
		{name: "bundle signed for another digest", signing: cosign(bundleRepo, func(_ string, tags []string) []testsign.Layer {
			return []testsign.Layer{testsign.Cosign(keys.Cosign, "sha256:"+strings.Repeat("9", 64), bundleRepo+":"+tags[len(tags)-1])}
		}), want: []string{"bundle " + bundleRepo + "@", "signs sha256:9999"}},
		{name: "payload signed for another repository", signing: atomic(sign(func(d, id string) ([]byte, error) {
			return testsign.Atomic(keys.Release, d, strings.Replace(id, "openshift-release-dev", "evil", 1))
		})), want: []string{"payload x86_64 " + releaseRepo + "@", "identity quay.io/evil/ocp-release", "does not match " + releaseRepo}},
		{name: "payload signed for the mirror's name", signing: atomic(sign(func(d, id string) ([]byte, error) {
			// The run pulls through a mirror (the registry serves quay.io/… under its own host):
			// a signature naming the mirror proves nothing about the upstream name.
			return testsign.Atomic(keys.Release, d, reg.Host()+"/"+id)
		})), want: []string{"payload x86_64 " + releaseRepo + "@", "identity " + reg.Host() + "/" + releaseRepo, "does not match " + releaseRepo}},
		{name: "bundle signed only for a floating tag", signing: cosign(bundleRepo, func(d string, _ []string) []testsign.Layer {
			return []testsign.Layer{testsign.Cosign(keys.Cosign, d, bundleRepo+":v4.18")}
		}), want: []string{"bundle " + bundleRepo + "@", "does not name the tag v4.18.4-3"}},
		{name: "operator signed by another key", signing: cosign("registry.redhat.io/lvms4/lvms-rhel9-operator", func(d string, _ []string) []testsign.Layer {
			return []testsign.Layer{testsign.Cosign(other.Cosign, d, "registry.redhat.io/lvms4/lvms-rhel9-operator")}
		}), want: []string{"lvms-rhel9-operator@", "not signed by a trusted key"}},
		{name: "payload signed by an expired key", args: []string{"--signature-policy", expiredPolicy},
			signing: atomic(sign(func(d, id string) ([]byte, error) { return testsign.Atomic(expired, d, id) })),
			want:    []string{"payload x86_64 " + releaseRepo + "@", "every trusted key expired", "expired on"}},
		{name: "operator without signature", signing: cosign("registry.redhat.io/lvms4/lvms-rhel9-operator", func(string, []string) []testsign.Layer { return nil }),
			want: []string{"lvms-rhel9-operator@", ": no signature; expected a cosign signature"}},
		{name: "payload signature of garbage bytes", signing: atomic(func(string, []string) []byte { return []byte("garbage\x00\xff") }),
			want: []string{"payload x86_64 " + releaseRepo + "@", "not an OpenPGP signed message"}},
		{name: "payload signature of a gigabyte", fault: &testregistry.Fault{Path: "/signature-1", Kind: testregistry.FaultHugeBody, Size: 1 << 30},
			want: []string{"payload", releaseRepo + "@", "more than a signature may have"}},
		{name: "signature stores down", fault: &testregistry.Fault{Path: "/signature-", Kind: testregistry.FaultStatus, Status: 503},
			want: []string{"payload", releaseRepo + "@", "signatures could not be fetched", "503"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			reg.SetSigning(c.signing)
			defer reg.SetSigning(nil)
			if c.fault != nil {
				reg.Inject(*c.fault)
				defer reg.ClearFaults()
			}
			dir := copyTree(t, "../../../testdata/microshift")
			before := treeHash(t, dir)
			args := append([]string{"--ocp", "4.18", "--allow-base-mismatch", "--cache-dir", t.TempDir()}, c.args...)
			code, out, errOut := e.run(dir, args...)
			if code == 0 {
				t.Fatalf("exit 0\n%s\n%s", out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if treeHash(t, dir) != before {
				t.Error("the tree changed")
			}
		})
	}
}

// TestAllowUnsigned: a missing signature passes with --allow-unsigned, and the run says so in
// the lock, -o json, the PR body's warnings and Provenance, and --check, which reproduces the
// allowance the lock records.
func TestAllowUnsigned(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	const operator = "registry.redhat.io/lvms4/lvms-rhel9-operator"
	e.reg.SetSigning(signingExcept(e.reg, func(repo, _ string, _ []string) (testregistry.Signatures, bool) {
		return testregistry.Signatures{}, repo == operator
	}))
	dir := copyTree(t, "../../../testdata/microshift")
	body := filepath.Join(t.TempDir(), "pr.md")
	res := runJSON(t, e, dir, "--ocp", "4.18", "--allow-base-mismatch", "--allow-unsigned", "--pr-body", body)
	unsigned := res.Provenance.Unsigned()
	if !res.Provenance.AllowUnsigned || len(unsigned) != 2 || unsigned[0].Image != operator || !strings.Contains(unsigned[0].Reason, "no signature") {
		t.Fatalf("provenance %+v", res.Provenance)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "this run allowed unsigned content (--allow-unsigned): 2 digest(s) unsigned") {
		t.Errorf("warnings %q", res.Warnings)
	}
	pr, _ := os.ReadFile(body)
	for _, w := range []string{"**2 digest(s) are unsigned** (the run allowed unsigned content)", "**unsigned**: allowed unsigned: no signature", "unsigned: lvms_operator"} {
		if !strings.Contains(string(pr), w) {
			t.Errorf("PR body lacks %q:\n%s", w, pr)
		}
	}
	l, err := lock.Read(filepath.Join(dir, filepath.FromSlash(lock.Path)))
	if err != nil || !l.Provenance.AllowUnsigned || len(l.Provenance.Unsigned()) != 2 {
		t.Fatalf("lock: %v %+v", err, l.Provenance)
	}
	code, out, errOut := e.run(dir, "--check")
	if code != 0 || !strings.Contains(errOut, "this run allowed unsigned content") || !strings.Contains(out, "2 unsigned (--allow-unsigned)") {
		t.Errorf("--check: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the allowance the same inputs are refused.
	dir2 := copyTree(t, "../../../testdata/microshift")
	if code, _, errOut := e.run(dir2, "--ocp", "4.18", "--allow-base-mismatch", "--cache-dir", t.TempDir()); code == 0 || !strings.Contains(errOut, operator) {
		t.Errorf("without --allow-unsigned: exit %d\n%s", code, errOut)
	}
}

// TestCheckOldLock: a lock written before signatures were verified has no provenance; --check
// says so and passes (it verifies the tree against its lock), rather than failing every tree
// made by an earlier version.
func TestCheckOldLock(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	if code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	p := filepath.Join(dir, filepath.FromSlash(lock.Path))
	l, err := lock.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	l.Provenance = nil
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(dir, "--check")
	if code != 0 || !strings.Contains(errOut, "records no provenance") {
		t.Errorf("--check of a lock without provenance: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestSignatureFlagsRefused: every bad --signature-policy file and --signature-store value is a
// usage error naming the flag (and the file) before anything is fetched; a FIFO or a device
// does not block the run; no credential is echoed.
func TestSignatureFlagsRefused(t *testing.T) {
	tree := t.TempDir()
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	keys := testsign.Shared()
	pem := base64.StdEncoding.EncodeToString(testsign.PublicPEM(keys.Cosign))
	rebaseArgs := func(extra ...string) []string {
		return append([]string{"--ocp", "4.18", "--microshift-dir", tree, "--offline"}, extra...)
	}
	for _, c := range []struct {
		name  string
		args  []string
		want  []string
		input bool
	}{
		{"empty policy path", rebaseArgs("--signature-policy", ""), []string{"--signature-policy", "an empty path"}, false},
		{"absent policy", rebaseArgs("--signature-policy", filepath.Join(dir, "absent.json")), []string{"--signature-policy", "absent.json", "no such file"}, true},
		{"empty policy file", rebaseArgs("--signature-policy", file("empty.json", "")), []string{"--signature-policy", "empty.json", "an empty file"}, true},
		{"FIFO policy", rebaseArgs("--signature-policy", fifo), []string{"--signature-policy", "fifo.json", "not a regular file"}, true},
		{"symlink to /dev/zero", rebaseArgs("--signature-policy", zero), []string{"--signature-policy", "zero.json", "not a regular file"}, true},
		{"directory policy", rebaseArgs("--signature-policy", dir), []string{"--signature-policy", "not a regular file"}, true},
		{"huge policy", rebaseArgs("--signature-policy", file("huge.json", strings.Repeat(" ", provenance.MaxPolicySize+1))), []string{"--signature-policy", "huge.json", "byte cap"}, true},
		{"duplicate field", rebaseArgs("--signature-policy", file("dup.json", `{"default": [{"type": "reject"}], "default": [{"type": "insecureAcceptAnything"}]}`)),
			[]string{"--signature-policy", "dup.json", `duplicate field "default"`}, true},
		{"wrong key type", rebaseArgs("--signature-policy", file("pem.json", `{"default": [{"type": "signedBy", "keyType": "GPGKeys", "keyData": "`+pem+`"}]}`)),
			[]string{"--signature-policy", "pem.json", "not an OpenPGP public keyring"}, true},
		{"absent key file", rebaseArgs("--signature-policy", file("nokey.json", `{"default": [{"type": "sigstoreSigned", "keyPath": "nope.pub"}]}`)),
			[]string{"--signature-policy", "nokey.json", "nope.pub"}, true},
		{"empty store", rebaseArgs("--signature-store", ""), []string{"--signature-store", "an empty item"}, false},
		{"store without scheme", rebaseArgs("--signature-store", "mirror.openshift.com/pub/openshift-v4/signatures/openshift/release"), []string{"--signature-store", "expected an http(s) URL"}, false},
		{"ftp store", rebaseArgs("--signature-store", "ftp://x.example/sigs"), []string{"--signature-store", "expected an http(s) URL"}, false},
		{"store with query", rebaseArgs("--signature-store", "https://x.example/sigs?a=b"), []string{"--signature-store", "without query"}, false},
		{"store with credentials", rebaseArgs("--signature-store", "https://user:canary-pass@x.example/sigs"), []string{"--signature-store", "credentials"}, false},
		{"duplicate store", rebaseArgs("--signature-store", "https://x.example/sigs", "--signature-store", "https://x.example/sigs/"), []string{"--signature-store", "given twice"}, false},
		{"outdated: absent policy", []string{"outdated", "--signature-policy", filepath.Join(dir, "absent.json")}, []string{"--signature-policy", "absent.json"}, true},
		{"outdated: empty policy path", []string{"outdated", "--signature-policy", ""}, []string{"--signature-policy", "an empty path"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(c.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			// A policy file that cannot be used is bad input (exit 1); a value that is empty
			// or not of the flag's form is the command line's mistake (exit 2), README "Exit codes".
			want := ExitUsage
			if c.input {
				want = ExitError
			}
			if code != want {
				t.Fatalf("exit %d, want %d\n%s", code, want, errOut.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if strings.Contains(out.String()+errOut.String(), "canary") {
				t.Errorf("credentials echoed:\n%s", errOut.String())
			}
		})
	}
}

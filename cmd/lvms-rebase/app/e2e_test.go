package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/dirtree"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
)

var update = flag.Bool("update", false, "rewrite the golden trees under testdata/golden")

// goldenRoot holds, per --ocp, the files a rebase of testdata/microshift writes. The applier
// tests apply these same trees to a real API server.
const goldenRoot = "../../../testdata/golden"

// eraCases are the minors the fixture registry carries, one or more per era. They all run
// on testdata/microshift, whose release.base is a 4.16 nightly, hence --allow-base-mismatch.
var eraCases = []string{"4.14", "4.15", "4.16", "4.17", "4.18", "4.20", "4.21"}

type e2e struct {
	t        *testing.T
	reg      *testregistry.Registry
	authFile string
	cache    string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	reg := testregistry.NewForTest(t, testregistry.Options{Username: "rebase-bot", Password: "s3cret-token"})
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	cred := base64.StdEncoding.EncodeToString([]byte("rebase-bot:s3cret-token"))
	if err := os.WriteFile(auth, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host(), cred)), 0o600); err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, reg: reg, authFile: auth, cache: filepath.Join(dir, "cache")}
}

// run executes lvms-rebase with the registry's mirror, auth and cache flags.
func (e *e2e) run(dir string, args ...string) (int, string, string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	code := Main(e.args(dir, args...), IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if strings.Contains(out.String()+errOut.String(), "s3cret-token") {
		e.t.Fatalf("credentials printed:\n%s\n%s", out.String(), errOut.String())
	}
	return code, out.String(), errOut.String()
}

// args are the command-line arguments of a run on dir: the registry's mirror, auth and cache
// flags, then args.
func (e *e2e) args(dir string, args ...string) []string {
	// The snapshot assets keep their canonical github.com URL (it is recorded in the lock) and
	// are served by the loopback registry through a mirror, like the images.
	full := append([]string{"--microshift-dir", dir, "-a", e.authFile, "--cache-dir", e.cache,
		"--insecure-registry", e.reg.Host()}, append(e.reg.MirrorFlags(), e.reg.SignatureFlags()...)...)
	return append(full, args...)
}

// copyTree copies testdata/microshift into a fresh directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// treeHash hashes every file path and content under root.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	files := readTree(t, root)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s\x00%s\x00", p, files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out, err := dirtree.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// written are the files a rebase owns or edits: the storage components, release JSONs, the
// lock, last_rebase_lvms.sh and the asset recipes.
func written(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, d := range files {
		if strings.HasPrefix(p, "assets/components/lvms/") || strings.HasPrefix(p, "assets/components/csi-snapshot-controller/") ||
			strings.HasPrefix(p, "assets/release/") || strings.HasPrefix(p, "scripts/auto-rebase/") {
			out[p] = d
		}
	}
	return out
}

// stableLock puts placeholders where a lock differs from one test process to the next: the
// test keys are generated when the tests run, so the fingerprints of the keys that signed and
// the digests of the signatures' bytes change; everything else of the provenance records —
// which digest, which format, identity, store and N — is compared.
func stableLock(t *testing.T, data []byte) []byte {
	t.Helper()
	l, err := lock.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", lock.Path, err)
	}
	if l.Provenance != nil {
		zero := strings.Repeat("0", 64)
		l.Provenance.Policy = "sha256:" + zero // the test policy holds the test keys
		for i := range l.Provenance.Records {
			for j := range l.Provenance.Records[i].Signatures {
				s := &l.Provenance.Records[i].Signatures[j]
				s.Key, s.SHA256 = "TEST-KEY", zero
				if s.Sig != "" {
					s.Sig = "sha256:" + zero
				}
			}
		}
	}
	out, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compareGolden(t *testing.T, ocp, root string) {
	t.Helper()
	got := written(readTree(t, root))
	if data, ok := got[lock.Path]; ok {
		got[lock.Path] = stableLock(t, data)
	}
	dir := filepath.Join(goldenRoot, ocp)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for p, d := range got {
			f := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, d, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := readTree(t, dir)
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: missing from the output", p)
		} else if !bytes.Equal(g, want[p]) {
			t.Errorf("%s differs from %s (run go test ./cmd/lvms-rebase/app -run TestEndToEnd -update and review) (-want +got):\n%s",
				p, filepath.Join(dir, p), cmp.Diff(string(want[p]), string(g)))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: written but not in the golden tree", p)
		}
	}
}

// TestEndToEnd runs the main job for every fixture era through the mirror with auth:
// golden tree, idempotent second run, --check clean, then --check exit 3 after a hand edit.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase per era")
	}
	e := newE2E(t)
	for _, ocp := range eraCases {
		t.Run(ocp, func(t *testing.T) {
			e.t = t
			dir := copyTree(t, "../../../testdata/microshift")
			presubmit(t, dir)
			code, out, errOut := e.run(dir, "--ocp", ocp, "--allow-base-mismatch")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			presubmit(t, dir)
			for _, phase := range []string{"resolve", "fetch-payloads", "translate", "render-lvms", "snapshot-assets", "render", "images", "records", "review", "write"} {
				if !hasStepLine(errOut, phase) {
					t.Errorf("stderr lacks the %s phase line:\n%s", phase, errOut)
				}
			}
			compareGolden(t, ocp, dir)
			if files := readTree(t, dir); string(files["assets/components/ovn/namespace.yaml"]) == "" {
				t.Errorf("a file outside the storage components was touched")
			}

			before := treeHash(t, dir)
			code, out, errOut = e.run(dir, "--ocp", ocp, "--allow-base-mismatch")
			if code != 0 || !strings.Contains(out, "no changes") {
				t.Fatalf("second run: exit %d, want 0 and \"no changes\"\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if after := treeHash(t, dir); after != before {
				t.Fatalf("second run changed the tree")
			}

			if code, out, errOut = e.run(dir, "--check"); code != 0 {
				t.Fatalf("--check on a fresh tree: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			edited := filepath.Join(dir, "assets/release/release-aarch64.json")
			data, _ := os.ReadFile(edited)
			if err := os.WriteFile(edited, append(data, ' '), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out, errOut = e.run(dir, "--check"); code != ExitDrift {
				t.Fatalf("--check after a hand edit: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitDrift, out, errOut)
			}
			if !strings.Contains(out, "release-aarch64.json") {
				t.Errorf("--check output does not name the edited file:\n%s", out)
			}
		})
	}
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// TestModes covers --dry-run, --diff, -o json, --pr-body, --commit and an offline --check
// from the lock, on one era.
func TestModes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	gitInit(t, dir)
	before := treeHash(t, dir)

	code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--dry-run")
	if code != 0 {
		t.Fatalf("--dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	if treeHash(t, dir) != before {
		t.Fatal("--dry-run changed the tree")
	}
	for _, want := range []string{"add    assets/components/lvms/lvms-operator_apps_v1_deployment.yaml",
		"remove assets/components/lvms/csi-driver.yaml", "change assets/release/release-x86_64.json",
		"would write:", "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4-3@sha256:"} {
		if !strings.Contains(out, want) {
			t.Errorf("--dry-run output lacks %q:\n%s", want, out)
		}
	}

	// --diff exits 3 when it shows differences, like --check (kubectl diff exits 1).
	code, out, _ = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--diff")
	if code != ExitDrift || !strings.Contains(out, "--- a/assets/release/release-x86_64.json") || !strings.Contains(out, "+    \"lvms_operator\": ") {
		t.Fatalf("--diff: exit %d, output lacks the release JSON diff:\n%s", code, out)
	}
	if treeHash(t, dir) != before {
		t.Fatal("--diff changed the tree")
	}

	code, out, errOut = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--dry-run", "-o", "json", "--log-format", "json")
	phases := 0
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("--log-format json: stderr line is not JSON: %q", line)
		}
		if rec["phase"] != nil && rec["took"] != nil {
			phases++
		}
	}
	if phases < 8 {
		t.Errorf("--log-format json: %d timed phase records, want one per phase:\n%s", phases, errOut)
	}
	var res struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Era        string `json:"era"`
		Resolution struct {
			Bundle   struct{ Ref, Digest string }
			Payloads []struct{ Arch string }
		} `json:"resolution"`
		Phases []v1alpha1.Phase             `json:"phases"` // durations are Go duration strings
		Images map[string]map[string]string `json:"images"`
		Plan   struct {
			Add, Remove []string
		} `json:"plan"`
	}
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	if res.Era != "lvms-4.18" || res.Resolution.Bundle.Digest == "" || len(res.Plan.Add) == 0 ||
		res.Images["aarch64"]["lvms_operator"] == res.Images["x86_64"]["lvms_operator"] {
		t.Fatalf("-o json: unexpected result (want per-arch lvms_operator digests): %+v", res)
	}
	if res.APIVersion != v1alpha1.APIVersion || res.Kind != v1alpha1.KindRebaseResult || len(res.Phases) == 0 {
		t.Fatalf("-o json: apiVersion %q, kind %q, %d phases", res.APIVersion, res.Kind, len(res.Phases))
	}
	writeArches := fmt.Sprint(res.Resolution.Payloads)

	body := filepath.Join(t.TempDir(), "pr.md")
	code, out, errOut = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--commit", "--pr-body", body)
	if code != 0 {
		t.Fatalf("--commit: exit %d\n%s\n%s", code, out, errOut)
	}
	log := gitOut(t, dir, "log", "--format=%s")
	for _, msg := range []string{"update lvms-rebase.lock.yaml", "update last_rebase_lvms.sh", "update LVMS images", "update LVMS manifests"} {
		if !strings.Contains(log, msg) {
			t.Errorf("git log lacks %q:\n%s", msg, log)
		}
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("--commit left changes uncommitted:\n%s", st)
	}
	md, err := os.ReadFile(body)
	if err != nil {
		t.Fatal(err)
	}
	// Without a lock, "before" is what the tree records: its last_rebase_lvms.sh and release.base.
	for _, want := range []string{"| LVMS bundle | v4.15.12-3 | v4.18.4-3 |", "| OCP payload | 4.16.0-0.nightly-2026-08-18-124557 | 4.18.10 |", "### Image digests",
		"| x86_64 | `lvms_operator` | – |", "| aarch64 | `topolvm_csi` |", "### RBAC rules", "### CRDs",
		"- added `lvmclusters.lvm.topolvm.io`", "- removed `assets/components/lvms/csi-driver.yaml`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("PR body lacks %q:\n%s", want, md)
		}
	}

	// On an up-to-date tree --diff shows nothing and exits 0.
	code, out, errOut = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--diff")
	if code != ExitOK || strings.Contains(out, "diff --git") || strings.Contains(errOut, "Error") {
		t.Fatalf("--diff on an up-to-date tree: exit %d, want 0 and no diff\n%s\n%s", code, out, errOut)
	}

	// The lock re-renders offline from the cache, listing the arches in the order a write does.
	code, out, errOut = e.run(dir, "--check", "--offline", "-o", "json")
	if code != 0 {
		t.Fatalf("--check --offline: exit %d\n%s\n%s", code, out, errOut)
	}
	// A no-change run prints at most one line per step: its name and the time it worked.
	checkNoChangeStderr(t, errOut)
	if err := json.Unmarshal([]byte(out), &res); err != nil || fmt.Sprint(res.Resolution.Payloads) != writeArches {
		t.Fatalf("--check -o json: %v; payload arches %v, a write's %s", err, res.Resolution.Payloads, writeArches)
	}
}

// TestFailuresLeaveTreeUntouched injects a failure into each phase and checks that the tree
// is byte-identical afterwards and that the error names the input.
func TestFailuresLeaveTreeUntouched(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	cases := []struct {
		name    string
		setup   func(t *testing.T, e *e2e, dir string) []string
		wantErr string
	}{
		{"registry fault", func(t *testing.T, e *e2e, dir string) []string {
			e.reg.Inject(testregistry.Fault{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStatus, Status: 500, Count: 1 << 20})
			return []string{"--ocp", "4.18", "--allow-base-mismatch"}
		}, "500"},
		{"bad bundle", func(t *testing.T, e *e2e, dir string) []string {
			pushBundle(t, e.reg, "v4.18.9", map[string][]byte{
				"manifests/lvms-operator.clusterserviceversion.yaml": []byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nspec: [unterminated\n"),
				"metadata/annotations.yaml":                          []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: lvms-operator\n"),
			})
			return []string{"--ocp", "4.18", "--allow-base-mismatch"}
		}, "lvms-operator.clusterserviceversion.yaml"},
		{"bad snapshot assets", func(t *testing.T, e *e2e, dir string) []string {
			assets := t.TempDir()
			mustMkdirAll(t, filepath.Join(assets, "assets"), 0o755)
			mustMkdirAll(t, filepath.Join(assets, "manifests"), 0o755)
			mustWriteFile(t, filepath.Join(assets, "assets", "csi_controller_deployment.yaml"), []byte("kind: [broken"), 0o644)
			mustWriteFile(t, filepath.Join(assets, "manifests", "05_operand_rbac.yaml"), []byte("kind: ClusterRole\n"), 0o644)
			return []string{"--ocp", "4.18", "--allow-base-mismatch", "--snapshot-assets", assets}
		}, "assets/volumesnapshotclasses.yaml"},
		{"missing release JSON", func(t *testing.T, e *e2e, dir string) []string {
			os.Remove(filepath.Join(dir, "assets/release/release-aarch64.json"))
			return []string{"--ocp", "4.18", "--allow-base-mismatch"}
		}, "release-aarch64.json"},
		{"unwritable component directory", func(t *testing.T, e *e2e, dir string) []string {
			// A file where the snapshot component directory must be: the swap cannot create it.
			mustWriteFile(t, filepath.Join(dir, "assets/components/csi-snapshot-controller"), []byte("in the way\n"), 0o644)
			return []string{"--ocp", "4.18", "--allow-base-mismatch"}
		}, "csi-snapshot-controller"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			dir := copyTree(t, "../../../testdata/microshift")
			args := tc.setup(t, e, dir)
			before := treeHash(t, dir)
			code, out, errOut := e.run(dir, append(args, "--timeout", "60s")...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitError, out, errOut)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("error does not name %q:\n%s", tc.wantErr, errOut)
			}
			if after := treeHash(t, dir); after != before {
				t.Fatal("a failed run changed the tree")
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--ocp", "4.18", "--allow-base-mismatch", "--dry-run", "--check"},
		{"--ocp", "4.18", "--allow-base-mismatch", "--diff", "--commit"},
		{"--ocp", "4.18", "--allow-base-mismatch", "-o", "wide"},
		{"--ocp", "4.18", "--allow-base-mismatch", "--log-format", "xml"},
		{"--no-such-flag"},
		{"no-such-command"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != ExitUsage {
			t.Errorf("lvms-rebase %v: exit %d, want %d (stderr %s)", args, code, ExitUsage, errOut.String())
		}
	}
}

func TestVersionHelpCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, "lvms-rebase dev"},
		{[]string{"version"}, "lvms-rebase dev"},
		{[]string{"--help"}, "--microshift-dir"},
		{[]string{"resolve", "--help"}, "--lvms-bundle-repo"},
		{[]string{"completion", "bash"}, "bash completion"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(tc.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("lvms-rebase %v: exit %d, output lacks %q:\n%s%s", tc.args, code, tc.want, out.String(), errOut.String())
		}
	}
}

func pushBundle(t *testing.T, reg *testregistry.Registry, tag string, files map[string][]byte) {
	t.Helper()
	layer, err := crane.Layer(files)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(reg.Host() + "/registry.redhat.io/lvms4/lvms-operator-bundle:" + tag)
	if err != nil {
		t.Fatal(err)
	}
	auth := authn.FromConfig(authn.AuthConfig{Username: "rebase-bot", Password: "s3cret-token"})
	if err := remote.Write(ref, img, remote.WithAuth(auth), remote.WithContext(context.Background())); err != nil {
		t.Fatal(err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	gitOut(t, dir, "init", "-q")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-qm", "before")
}

// gitOut runs git in dir for a test's setup or checks (through internal/git, as the tool does)
// with an identity, and returns its standard output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git.Cmd{Dir: dir, Args: append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost"}, args...),
		Env: []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost"}}.Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

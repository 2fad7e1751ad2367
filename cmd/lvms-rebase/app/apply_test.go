package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/kubeconfig"
)

// applyAssets is the applier's 4.18-like fixture tree.
var applyAssets = filepath.Join("..", "..", "..", "applier", "testdata", "eras", "4.18", "assets")

func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	p, err := kubeconfig.Write(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyCommandUsage(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	mustWriteFile(t, kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n"), 0o600)
	badCfg := filepath.Join(dir, "config.yaml")
	mustWriteFile(t, badCfg, []byte("storage:\n  optionalCsiComponents: [none, snapshot-controller]\n"), 0o644)
	badLvmd := filepath.Join(dir, "lvmd.yaml")
	mustWriteFile(t, badLvmd, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  spare-gb: -1\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no assets", []string{"apply", "--kubeconfig", kc}, ExitUsage, `required flag(s) "assets" not set`},
		{"bad output", []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "-o", "wide"}, ExitUsage, "-o/--output: expected text, json or yaml"},
		{"bad log format", []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--log-format", "xml"}, ExitUsage, "--log-format: expected plain, text or json"},
		{"empty kubeconfig", []string{"apply", "--kubeconfig", "", "--assets", applyAssets}, ExitUsage, "--kubeconfig: an empty or blank value"}, // never $KUBECONFIG or ~/.kube/config in its place
		{"assets not a dir", []string{"apply", "--kubeconfig", kc, "--assets", kc}, ExitError, "not a directory"},                                // bad input, not usage (README "Exit codes"),
		{"bad storage config", []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--config", badCfg}, ExitError, "storage.optionalCsiComponents"},
		{"bad lvmd", []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--lvmd", badLvmd, "--volume-groups", "vg", "--timeout", "3s"}, ExitError, "device-classes[0].spare-gb"},
		{"unknown arch", []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--lvmd", filepath.Join(dir, "none.yaml"), "--arch", "ppc64le"}, ExitError, "release-ppc64le.json for arch ppc64le"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			code, _, errOut := runMain(t, tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.wantCode, errOut, tc.wantErr)
			}
		})
	}
}

func TestApplyCommand(t *testing.T) {
	cfg := controlplanetest.Start(t)
	kc := writeKubeconfig(t, cfg)
	dir := t.TempDir()
	lvmd := filepath.Join(dir, "lvmd.yaml")
	mustWriteFile(t, lvmd, []byte("device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n  spare-gb: 0\n"), 0o644)
	msCfg := filepath.Join(dir, "config.yaml")
	mustWriteFile(t, msCfg, []byte("dns:\n  baseDomain: example.com\nstorage:\n  driver: lvms\n  optionalCsiComponents: [snapshot-controller]\n"), 0o644)
	runtime := filepath.Join(dir, "runtime", "lvmd.yaml")
	args := []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--arch", "aarch64", "--lvmd", lvmd, "--config", msCfg, "--runtime-lvmd", runtime, "--volume-groups", "rhel"}

	code, out, errOut := runMain(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"era: lvms", "lvmd: Read from " + lvmd, "created Deployment.apps openshift-storage/lvms-operator", "created LVMCluster.lvm.topolvm.io openshift-storage/lvms", " 0 updated, 0 deleted, 0 unchanged, 0 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("first apply output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(runtime); err != nil {
		t.Errorf("runtime lvmd copy: %v", err)
	}
	code, out, errOut = runMain(t, args...)
	if code != ExitOK || !strings.Contains(out, "\n0 created, 0 updated, 0 deleted, ") {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errOut)
	}

	// -q: nothing on stdout, and on stderr only warnings and errors.
	code, out, errOut = runMain(t, append(args, "-q")...)
	if code != ExitOK || out != "" {
		t.Fatalf("apply -q: exit %d, stdout %q\n%s", code, out, errOut)
	}
	checkOnlyWarnings(t, errOut)

	// -v 8: the API requests as kubectl logs them (internal/httplog wraps the client's
	// transport); the client's credentials print at no level.
	code, out, errOut = runMain(t, append(args, "-v", "8")...)
	if code != ExitOK || !strings.Contains(errOut, "GET "+cfg.Host+"/") || !strings.Contains(errOut, "Response Status: 200 OK in ") ||
		!strings.Contains(errOut, "Response Body: ") {
		t.Fatalf("apply -v 8: exit %d, want the API requests with their headers and bodies\n%s\n%s", code, out, errOut)
	}
	for _, secret := range []string{cfg.BearerToken, string(cfg.KeyData)} {
		if secret != "" && strings.Contains(errOut, secret) {
			t.Error("apply -v 8 prints the client's credentials")
		}
	}

	// -o json and --log-format json, as for the other commands.
	code, out, errOut = runMain(t, append(args, "-o", "json", "--log-format", "json")...)
	if code != ExitOK {
		t.Fatalf("apply -o json: exit %d\n%s\n%s", code, out, errOut)
	}
	var res struct {
		Era       string
		Lvmd      string
		Created   []map[string]string
		Unchanged []struct{ Kind, Namespace, Name string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("apply -o json is not JSON: %v\n%s", err, out)
	}
	if res.Era != "lvms" || res.Lvmd != "Read from "+lvmd || res.Created == nil || len(res.Created) != 0 ||
		!slices.Contains(res.Unchanged, struct{ Kind, Namespace, Name string }{"Deployment", "openshift-storage", "lvms-operator"}) {
		t.Errorf("apply -o json: %+v", res)
	}
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Errorf("apply --log-format json: stderr line is not JSON: %q", line)
		}
	}
}

// $KUBECONFIG may be a list, as for kubectl: files are merged and missing ones skipped.
func TestApplyCommandKubeconfigList(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	mustWriteFile(t, kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n"), 0o600)
	t.Setenv("KUBECONFIG", filepath.Join(dir, "absent")+string(os.PathListSeparator)+kc)
	// The list loads; nothing listens on its server, so the short deadline ends the retries.
	code, _, errOut := runMain(t, "apply", "--assets", applyAssets, "--lvmd", filepath.Join(dir, "none.yaml"),
		"--runtime-lvmd", filepath.Join(dir, "runtime", "lvmd.yaml"), "--volume-groups", "vg", "--timeout", "500ms")
	if code != ExitError || !strings.Contains(errOut, "API server https://127.0.0.1:1 not reachable") {
		t.Errorf("exit %d, stderr %q, want the kubeconfig list loaded and its server unreachable", code, errOut)
	}
}

// The kubeconfig is found as kubectl finds it: ~/.kube/config without $KUBECONFIG, and --context
// picks a context other than the current one; an explicit --kubeconfig wins over both.
func TestApplyCommandKubeconfigContext(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	mustWriteFile(t, kc, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: one, cluster: {server: "https://127.0.0.1:1"}}
- {name: two, cluster: {server: "https://127.0.0.1:2"}}
contexts:
- {name: one, context: {cluster: one}}
- {name: two, context: {cluster: two}}
current-context: one
`), 0o600)
	other := filepath.Join(dir, "other")
	mustWriteFile(t, other, []byte("apiVersion: v1\nkind: Config\nclusters:\n- {name: c, cluster: {server: \"https://127.0.0.1:3\"}}\ncontexts:\n- {name: c, context: {cluster: c}}\ncurrent-context: c\n"), 0o600)
	home := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = kc // ~/.kube/config
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = home })
	t.Setenv("KUBECONFIG", "")
	base := []string{"apply", "--assets", applyAssets, "--lvmd", filepath.Join(dir, "none.yaml"),
		"--runtime-lvmd", filepath.Join(dir, "runtime", "lvmd.yaml"), "--volume-groups", "vg", "--timeout", "300ms"}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"home file", nil, ExitError, "API server https://127.0.0.1:1 not reachable"},
		{"context", []string{"--context", "two"}, ExitError, "API server https://127.0.0.1:2 not reachable"},
		{"explicit wins", []string{"--kubeconfig", other}, ExitError, "API server https://127.0.0.1:3 not reachable"},
		{"unknown context", []string{"--context", "three"}, ExitError, "(context three)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runMain(t, append(slices.Clone(base), tc.args...)...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.wantCode, errOut, tc.want)
			}
		})
	}
}

// apply --prune -o json lists what the prune deleted, and as remaining and kept only what it
// left, with why; the text form says "kept … : why". (Before, remaining repeated the deleted
// objects after a prune.)
func TestApplyPruneReportsWhatItLeft(t *testing.T) {
	cfg := controlplanetest.Start(t)
	kc := writeKubeconfig(t, cfg)
	dir := t.TempDir()
	base := []string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--lvmd", filepath.Join(dir, "none.yaml"), "--runtime-lvmd", filepath.Join(dir, "rt.yaml"), "--volume-groups", "rhel"}
	if code, out, errOut := runMain(t, base...); code != ExitOK {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errOut)
	}
	// Someone's own ClusterRole takes the name of one of MicroShift's.
	dyn := dynamic.NewForConfigOrDie(cfg)
	crs := dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"})
	ctx := context.Background()
	if err := crs.Delete(ctx, "vg-manager", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "vg-manager"},
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"nodes"}, "verbs": []any{"get"}}}}}
	if _, err := crs.Create(ctx, theirs, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "config.yaml")
	mustWriteFile(t, none, []byte("storage:\n  driver: none\n"), 0o644)
	prune := append(slices.Clone(base), "--config", none, "--prune")
	code, out, errOut := runMain(t, append(prune, "-o", "json")...)
	if code != ExitOK {
		t.Fatalf("apply --prune: exit %d\n%s%s", code, out, errOut)
	}
	var res struct {
		Deleted, Remaining, Foreign []struct{ Kind, Name string }
		Kept                        []struct{ Kind, Name, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Deleted) == 0 || len(res.Remaining) != 0 || len(res.Foreign) != 1 || len(res.Kept) != 1 ||
		res.Kept[0].Name != "vg-manager" || !strings.Contains(res.Kept[0].Reason, "no server-side apply by microshift-storage (written by kubectl-create (Update))") {
		t.Errorf("apply --prune -o json: %+v", res)
	}
	code, out, errOut = runMain(t, prune...)
	if code != ExitOK || !strings.Contains(out, "kept ClusterRole.rbac.authorization.k8s.io vg-manager: not applied by MicroShift; left alone: no server-side apply") ||
		!strings.Contains(out, "0 deleted") || strings.Contains(out, "remaining ") {
		t.Errorf("second apply --prune: exit %d\n%s%s", code, out, errOut)
	}
}

// apply honours SIGINT and SIGTERM in its waits: against an API server that accepts
// connections and never answers, a signal ends the run at once with 130 or 143 and says so.
func TestApplySignalEndsTheWait(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the test binary")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 64) // connections held open, never answered
	t.Cleanup(func() {
		close(held)
		for c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	mustWriteFile(t, kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://"+l.Addr().String()+"\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n"), 0o600)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, ExitSIGINT}, {syscall.SIGTERM, ExitSIGTERM}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			args, _ := json.Marshal([]string{"apply", "--kubeconfig", kc, "--assets", applyAssets, "--lvmd", filepath.Join(dir, "none.yaml"),
				"--runtime-lvmd", filepath.Join(dir, "rt.yaml"), "--volume-groups", "rhel", "--timeout", "10m", "-v", "1"})
			cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
			cmd.Env = append(os.Environ(), "LVMS_REBASE_MAIN_ARGS="+string(args))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second) // inside the wait for the API server
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				_ = cmd.Wait() // the exit status is checked below
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("apply did not end after %s:\n%s", tc.sig, stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != tc.code || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", got, tc.code, stderr.String())
			}
		})
	}
}

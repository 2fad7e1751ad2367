package applier

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

func testOptions(t testing.TB, era string) Options {
	t.Helper()
	dir := t.TempDir()
	return Options{
		Assets:          os.DirFS(filepath.Join("testdata", "eras", era, "assets")),
		Arch:            "x86_64",
		LvmdPath:        filepath.Join(dir, "etc-lvmd.yaml"),
		RuntimeLvmdPath: filepath.Join(dir, "var-lib", "lvmd.yaml"),
		VolumeGroups:    StaticVolumeGroups{"rhel"},
		RESTConfig:      &rest.Config{Host: "https://127.0.0.1:1"},
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func mustPrepare(t *testing.T, o Options) *preparation {
	t.Helper()
	o, err := withDefaults(o)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := prepare(context.Background(), o)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return pl
}

func find(t *testing.T, pl *preparation, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range pl.objects {
		if o.Obj.GetKind() == kind && o.Obj.GetName() == name {
			return o.Obj
		}
	}
	t.Fatalf("%s %s not planned; planned: %v", kind, name, pl.refs())
	return nil
}

func TestPrepareTopoLVM(t *testing.T) {
	pl := mustPrepare(t, testOptions(t, "4.16"))
	if pl.era.era != EraTopoLVM {
		t.Fatalf("era = %s", pl.era.era)
	}
	refs := pl.refs()
	// CRDs first, then the declared kind order.
	last := -1
	for _, r := range refs {
		rank := assets.KindRank(r.Kind)
		if rank < last {
			t.Fatalf("apply order broken at %s: %v", r, refs)
		}
		last = rank
	}
	if refs[0].Kind != "CustomResourceDefinition" || refs[len(refs)-1].Kind != "StorageClass" {
		t.Errorf("first/last = %s / %s", refs[0], refs[len(refs)-1])
	}
	// The aggregate RBAC file is not applied (its leader-election Role would be the only trace).
	for _, r := range refs {
		if r.Name == "csi-snapshot-controller-leaderelection" {
			t.Errorf("%s from 05_operand_rbac.yaml planned", r)
		}
	}
	cm := find(t, pl, "ConfigMap", "lvmd")
	data, _, _ := unstructured.NestedString(cm.Object, "data", "lvmd.yaml")
	// Domain §8.3: the rendered form is the canonical YAML prefixed with "# <Message>".
	if want := "# Defaulting to the only available volume group\n" + string(pl.lvmdCanonical); !strings.Contains(data, "volume-group: rhel") || data != want {
		t.Errorf("lvmd ConfigMap data = %q, want %q", data, want)
	}
	ds := find(t, pl, "DaemonSet", "topolvm-node")
	sum, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "metadata", "annotations", lvmdChecksumAnnotation)
	if sum != assets.Sha256sum(data) || sum != pl.result.LvmdChecksum {
		t.Errorf("checksum annotation %q, want sha256 of the ConfigMap data %q", sum, assets.Sha256sum(data))
	}
	img, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
	if !strings.HasPrefix(img[0].(map[string]any)["image"].(string), "registry.redhat.io/lvms4/topolvm-rhel9@sha256:") {
		t.Errorf("image not rendered: %v", img[0])
	}
	// 4.16 ships the snapshot webhook, so the default includes it.
	find(t, pl, "ValidatingWebhookConfiguration", "snapshot.storage.k8s.io")
	// A rollback from LVMS: the TopoLVM era deletes the LVMS objects (only those proven
	// MicroShift's, checked on the API server).
	if !slices.Equal(pl.deletes, lvmsObjects) {
		t.Errorf("TopoLVM era deletes %v, want lvmsObjects", pl.deletes)
	}
}

func TestPrepareLVMS(t *testing.T) {
	pl := mustPrepare(t, testOptions(t, "4.18"))
	if pl.era.era != EraLVMS {
		t.Fatalf("era = %s", pl.era.era)
	}
	rb := find(t, pl, "RoleBinding", "lvms-operator")
	if _, found, _ := unstructured.NestedString(rb.Object, "roleRef", "namespace"); found {
		t.Error("roleRef.namespace (not an API field) kept")
	}
	dep := find(t, pl, "Deployment", "lvms-operator")
	if _, found := dep.Object["label"]; found {
		t.Error("Deployment top-level label: kept")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(dep.Object, "status"); found {
		t.Error("status sent")
	}
	snap := find(t, pl, "Deployment", "csi-snapshot-controller")
	if _, found, _ := unstructured.NestedFieldNoCopy(snap.Object, "spec", "serviceName"); found {
		t.Error("Deployment spec.serviceName (not an API field) kept")
	}
	// The LVMCluster goes after the operator and before its admission webhooks (applyOrder).
	refs := pl.refs()
	idx := func(kind string) int {
		return slices.IndexFunc(refs, func(r ObjectRef) bool { return r.Kind == kind })
	}
	if lc, dep, vwc := idx("LVMCluster"), idx("Deployment"), idx("ValidatingWebhookConfiguration"); lc < 0 || dep > lc || vwc < lc {
		t.Errorf("order Deployment %d, LVMCluster %d, ValidatingWebhookConfiguration %d: want the LVMCluster between them", dep, lc, vwc)
	}
	// Legacy TopoLVM objects and the 4.17 snapshot webhook are deleted; kept objects are not.
	for _, want := range []string{"topolvm-node", "topolvm-controller", "csi-snapshot-webhook"} {
		if !slices.ContainsFunc(pl.deletes, func(r ObjectRef) bool { return r.Name == want }) {
			t.Errorf("%s not in deletions %v", want, pl.deletes)
		}
	}
	for _, r := range pl.deletes {
		switch r.Kind {
		case "CustomResourceDefinition", "StorageClass", "CSIDriver", "Namespace", "PersistentVolume", "PersistentVolumeClaim":
			t.Errorf("deletes %s, which must be kept", r)
		}
	}
}

func TestPrepareErrors(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(t *testing.T, o *Options)
		wantErr string
	}{
		{
			name: "missing image key names file and key",
			mod: func(t *testing.T, o *Options) {
				o.Images = map[string]string{"csi_snapshot_controller": "x"}
			},
			wantErr: `rendering components/lvms/lvms-operator_apps_v1_deployment.yaml: missing key "lvms_operator"`,
		},
		{
			name:    "missing release file",
			mod:     func(t *testing.T, o *Options) { o.Arch = "s390x" },
			wantErr: "assets release/: reading release file release-s390x.json for arch s390x",
		},
		{
			name: "bad storage config names the field",
			mod: func(t *testing.T, o *Options) {
				o.Storage.OptionalCSIComponents = []string{"none", "snapshot-controller"}
			},
			wantErr: "storage.optionalCsiComponents",
		},
		{
			name: "duplicate object across files",
			mod: func(t *testing.T, o *Options) {
				o.Assets = overlay(o.Assets, map[string]string{
					"components/lvms/extra.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: vg-manager\n  namespace: openshift-storage\n",
				})
			},
			wantErr: "both define ServiceAccount openshift-storage/vg-manager",
		},
		{
			name: "unknown kind has no place in the order",
			mod: func(t *testing.T, o *Options) {
				o.Assets = overlay(o.Assets, map[string]string{
					"components/lvms/extra.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: openshift-storage\n",
				})
			},
			wantErr: "asset components/lvms/extra.yaml: kind Secret (s) has no place in the declared apply order",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, "4.18")
			tc.mod(t, &o)
			o, _ = withDefaults(o)
			_, err := prepare(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("prepare error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestPrepareDriverNone(t *testing.T) {
	o := testOptions(t, "4.18")
	o.Storage.Driver = DriverNone
	pl := mustPrepare(t, o)
	for _, r := range pl.refs() {
		if r.Namespace == StorageNamespace || strings.Contains(r.Name, "topolvm") || r.Kind == "StorageClass" || r.Kind == "LVMCluster" {
			t.Errorf("driver none plans storage object %s", r)
		}
	}
	o.Storage.OptionalCSIComponents = []string{"none"}
	if pl := mustPrepare(t, o); len(pl.objects)+len(pl.deletes) != 0 {
		t.Errorf("driver none + no snapshots plans %v, deletes %v", pl.refs(), pl.deletes)
	}
}

func TestPrepareNoVolumeGroups(t *testing.T) {
	o := testOptions(t, "4.18")
	o.VolumeGroups = StaticVolumeGroups{"a", "b"}
	pl := mustPrepare(t, o)
	if pl.result.Plan.Storage || len(pl.result.Warnings) == 0 || !strings.Contains(pl.result.Warnings[0], "Multiple volume groups") {
		t.Errorf("plan %+v warnings %q", pl.result.Plan, pl.result.Warnings)
	}
}

// overlay copies an fs.FS into memory and adds files on top.
func overlay(base fs.FS, files map[string]string) fs.FS {
	m := fstest.MapFS{}
	_ = fs.WalkDir(base, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(base, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	for p, c := range files {
		m[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return m
}

// 4.14/4.15 assets template lvmd's socket path (`{{ Dir .SocketName }}`) from the lvmd config.
func TestPrepareSocketName(t *testing.T) {
	o := testOptions(t, "4.16")
	mustWriteFile(t, o.LvmdPath, []byte("socket-name: /run/custom/lvmd.sock\ndevice-classes:\n- name: a\n  volume-group: rhel\n  default: true\n"), 0o644)
	const file = "components/lvms/topolvm-node_daemonset.yaml"
	data, err := fs.ReadFile(o.Assets, file)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "        - --embed-lvmd\n", "        - --embed-lvmd\n        - '--lvmd-socket={{ .SocketName }}'\n        - '--socket-dir={{ Dir .SocketName }}'\n", 1))
	o.Assets = overlay(o.Assets, map[string]string{file: string(data)})
	ds := find(t, mustPrepare(t, o), "DaemonSet", "topolvm-node")
	c, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
	cmd := c[0].(map[string]any)["command"].([]any)
	if len(cmd) != 4 || cmd[2] != "--lvmd-socket=/run/custom/lvmd.sock" || cmd[3] != "--socket-dir=/run/custom" {
		t.Errorf("command = %v", cmd)
	}
}

// Without LVM on the host nothing storage-related is deployed, even with an lvmd file.
func TestPrepareNoLVM(t *testing.T) {
	o := testOptions(t, "4.18")
	o.VolumeGroups = failingVGs{}
	mustWriteFile(t, o.LvmdPath, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n"), 0o644)
	pl := mustPrepare(t, o)
	if pl.result.Plan.Storage || len(pl.result.Warnings) != 1 || !strings.Contains(pl.result.Warnings[0], "LVM is not installed") {
		t.Fatalf("plan %+v warnings %q", pl.result.Plan, pl.result.Warnings)
	}
	for _, r := range pl.refs() {
		if r.Namespace == StorageNamespace || r.Kind == "StorageClass" {
			t.Errorf("planned %s without LVM", r)
		}
	}
}

// The LVMS runtime copy is written before the API server is contacted, with MicroShift's modes:
// generated defaults 0600, a copied user file 0644 (domain §8.3).
func TestRuntimeLvmdCopyMode(t *testing.T) {
	tests := []struct {
		name     string
		userFile string
		want     os.FileMode
	}{
		{name: "defaults", want: 0o600},
		{name: "user file", userFile: "device-classes:\n- name: a\n  volume-group: rhel\n  default: true\n", want: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t, "4.18")
			if tt.userFile != "" {
				if err := os.WriteFile(o.LvmdPath, []byte(tt.userFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Nothing listens on the test host, so Apply stops at connect, after the copy.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := Apply(ctx, o); err == nil {
				t.Fatal("Apply against an unreachable API server succeeded")
			}
			st, err := os.Stat(o.RuntimeLvmdPath)
			if err != nil {
				t.Fatalf("runtime copy not written: %v", err)
			}
			if st.Mode().Perm() != tt.want {
				t.Errorf("runtime copy mode %o, want %o", st.Mode().Perm(), tt.want)
			}
		})
	}
}

// An API server that accepts connections but never answers (kube-apiserver wedged while starting)
// must not outlive the caller's deadline: the reachability probe honours ctx.
func TestConnectHonoursDeadlineOnHungServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	o := testOptions(t, "4.18")
	o.RESTConfig = &rest.Config{Host: "http://" + l.Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Apply(ctx, o)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not reachable") {
			t.Errorf("Apply against a hung API server: %v, want a not-reachable error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Apply still blocked 10s after a 500ms deadline")
	}
}

// A server that answers the reachability probe and then hangs (discovery stuck behind an
// overloaded aggregated API) must not outlive the deadline either: the RESTMapper's discovery
// goes through the context-aware client-go calls.
func TestDiscoveryHonoursDeadlineOnHungServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"major":"1","minor":"37","gitVersion":"v1.37.0"}`) // the client reports a failed write
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	o := testOptions(t, "4.18")
	o.RESTConfig = &rest.Config{Host: srv.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Apply(ctx, o)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Apply against a hung discovery: %v, want a deadline error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Apply still blocked 10s after a 500ms deadline")
	}
}

// without copies fsys minus the files whose path starts with prefix.
func without(fsys fs.FS, prefix string) fs.FS {
	out := fstest.MapFS{}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, prefix) {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		out[p] = &fstest.MapFile{Data: data}
		return err
	})
	return out
}

// A bad lvmd.yaml fails the storage component only, with an *LvmdError naming the field, and is
// reported even when the host has no LVM.
func TestPrepareBadLvmd(t *testing.T) {
	for name, vgs := range map[string]VolumeGroupLister{"with LVM": StaticVolumeGroups{"vg"}, "without LVM": failingVGs{}} {
		t.Run(name, func(t *testing.T) {
			o := testOptions(t, "4.18")
			o.VolumeGroups = vgs
			mustWriteFile(t, o.LvmdPath, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: b\n  volume-group: vg\n  spare-gb: -3\n"), 0o644)
			pl := mustPrepare(t, o)
			var le *LvmdError
			if !errors.As(pl.storageErr, &le) || le.Field != "device-classes[1].spare-gb" || le.File != o.LvmdPath {
				t.Fatalf("storage error = %#v, want an *LvmdError for device-classes[1].spare-gb", pl.storageErr)
			}
			if pl.result.Plan.Storage || !pl.result.Plan.SnapshotController {
				t.Errorf("plan %+v, want storage off and the snapshot controller on", pl.result.Plan)
			}
			for _, r := range pl.refs() {
				if r.Namespace == StorageNamespace {
					t.Errorf("planned %s with a bad lvmd.yaml", r)
				}
			}
			if _, ok := find(t, pl, "Deployment", "csi-snapshot-controller"), true; !ok {
				t.Error("snapshot controller not planned")
			}
		})
	}
}

// Waiting for another Apply of the process ends with the caller's context (MicroShift's
// shutdown), and names what it waited for.
func TestApplyLockHonoursContext(t *testing.T) {
	applyLock <- struct{}{} // another Apply is running
	defer func() { <-applyLock }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Apply(ctx, testOptions(t, "4.18")); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for another Apply") {
			t.Errorf("Apply while another runs, cancelled: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Apply kept waiting for the lock after its context ended")
	}
}

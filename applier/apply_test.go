package applier

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// counter records the requests a rest.Config sends; everything but GET is a write.
type counter struct {
	mu       sync.Mutex
	total    int
	mutating []string
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *counter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			c.mu.Lock()
			c.total++
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				c.mutating = append(c.mutating, r.Method+" "+r.URL.Path)
			}
			c.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

func (c *counter) snapshot() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, slices.Clone(c.mutating)
}

// env is one test's API server plus helpers to inspect it.
type env struct {
	t      *testing.T
	cfg    *rest.Config
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := controlplanetest.Start(t)
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	return &env{t: t, cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

func (e *env) ri(ref ObjectRef) dynamic.ResourceInterface {
	e.t.Helper()
	m, err := e.mapper.RESTMapping(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Version)
	if err != nil {
		e.mapper.Reset()
		if m, err = e.mapper.RESTMapping(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Version); err != nil {
			e.t.Fatalf("mapping %s: %v", ref, err)
		}
	}
	if m.Scope.Name() == "namespace" {
		return e.dyn.Resource(m.Resource).Namespace(ref.Namespace)
	}
	return e.dyn.Resource(m.Resource)
}

func (e *env) get(ref ObjectRef) (*unstructured.Unstructured, bool) {
	e.t.Helper()
	u, err := e.ri(ref).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		e.t.Fatalf("get %s: %v", ref, err)
	}
	return u, true
}

func (e *env) mustGet(ref ObjectRef) *unstructured.Unstructured {
	e.t.Helper()
	u, ok := e.get(ref)
	if !ok {
		e.t.Fatalf("%s does not exist", ref)
	}
	return u
}

// versions maps every object the result touched to its resourceVersion.
func (e *env) versions(res *Result) map[string]string {
	out := map[string]string{}
	for _, list := range [][]ObjectRef{res.Created, res.Updated, res.Unchanged} {
		for _, r := range list {
			out[r.String()] = e.mustGet(r).GetResourceVersion()
		}
	}
	return out
}

func (e *env) apply(o Options) *Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if o.RESTConfig == nil || o.RESTConfig.Host == "https://127.0.0.1:1" {
		o.RESTConfig = e.cfg
	}
	res, err := Apply(ctx, o)
	if err != nil {
		e.t.Fatalf("Apply: %v", err)
	}
	return res
}

// assertNoop applies again through a counting transport and checks nothing was written.
// prev is the result of the apply before, whose objects' resourceVersions must not move.
func (e *env) assertNoop(o Options, prev *Result) {
	e.t.Helper()
	var c counter
	o.RESTConfig = c.wrap(e.cfg)
	first := e.versions(prev)
	res := e.apply(o)
	if _, muts := c.snapshot(); len(muts) != 0 {
		e.t.Errorf("unchanged re-apply sent %d mutating requests: %v", len(muts), muts)
	}
	if len(res.Created)+len(res.Updated)+len(res.Deleted) != 0 || res.RuntimeLvmdWritten {
		e.t.Errorf("unchanged re-apply: created %v updated %v deleted %v lvmd written %v", res.Created, res.Updated, res.Deleted, res.RuntimeLvmdWritten)
	}
	if after := e.versions(res); !mapsEqual(first, after) {
		e.t.Errorf("resourceVersions changed:\nbefore %v\nafter  %v", first, after)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func refsNamed(refs []ObjectRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return out
}

func TestApplyFreshEras(t *testing.T) {
	for _, era := range []string{"4.16", "4.17", "4.18"} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t)
			o := testOptions(t, era)
			res := e.apply(o)
			if len(res.Created) < 20 || len(res.Updated)+len(res.Deleted) != 0 {
				t.Fatalf("first apply: created %d %v, updated %v, deleted %v", len(res.Created), refsNamed(res.Created), res.Updated, res.Deleted)
			}
			switch era {
			case "4.16":
				if res.Era != EraTopoLVM {
					t.Errorf("era %s", res.Era)
				}
				// No SCC API on a plain kube-apiserver: the SCC is reported, not failed.
				if len(res.Skipped) != 1 || res.Skipped[0].Object.Kind != "SecurityContextConstraints" {
					t.Errorf("skipped = %+v, want the SCC", res.Skipped)
				}
				e.mustGet(deploymentRef(StorageNamespace, "topolvm-controller"))
				e.mustGet(ObjectRef{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Name: "snapshot.storage.k8s.io"})
			default:
				if res.Era != EraLVMS || len(res.Skipped) != 0 {
					t.Errorf("era %s skipped %+v", res.Era, res.Skipped)
				}
				lc := e.mustGet(ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"})
				if _, found := lc.Object["spec"]; found {
					t.Errorf("LVMCluster has a spec: %v", lc.Object["spec"])
				}
				dep := e.mustGet(deploymentRef(StorageNamespace, "lvms-operator"))
				c, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
				if img := c[0].(map[string]any)["image"].(string); !strings.HasPrefix(img, "registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:") {
					t.Errorf("operator image %q", img)
				}
				vwc := e.mustGet(ObjectRef{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Name: "vlvmcluster.kb.io-lvms-operator"})
				if vwc.GetNamespace() != "" {
					t.Errorf("cluster-scoped webhook has namespace %q", vwc.GetNamespace())
				}
				data, err := os.ReadFile(o.RuntimeLvmdPath)
				if err != nil || !res.RuntimeLvmdWritten || assets.Sha256sum(string(data)) != res.LvmdChecksum {
					t.Errorf("runtime lvmd copy: %q %v written=%v", data, err, res.RuntimeLvmdWritten)
				}
			}
			for _, ref := range res.Created {
				if ref.Kind == "LVMCluster" {
					continue
				}
				u := e.mustGet(ref)
				var owned bool
				for _, mf := range u.GetManagedFields() {
					owned = owned || (mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply)
				}
				if !owned {
					t.Errorf("%s not server-side applied by %s: %v", ref, FieldManager, u.GetManagedFields())
				}
			}
			e.assertNoop(o, res)
		})
	}
}

func TestLvmdChangeRollsOnlyNodeTemplate(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.16")
	first := e.apply(o)
	before := e.versions(first)
	ds := e.mustGet(daemonSetRef(StorageNamespace, "topolvm-node"))
	gen := ds.GetGeneration()

	// A user file: a different volume group (the host has both).
	o.VolumeGroups = StaticVolumeGroups{"rhel", "data"}
	if err := os.WriteFile(o.LvmdPath, []byte("# edge device\ndevice-classes:\n- name: default\n  volume-group: data\n  default: true\n  spare-gb: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := e.apply(o)
	want := []string{"ConfigMap openshift-storage/lvmd", "DaemonSet.apps openshift-storage/topolvm-node"}
	if got := refsNamed(res.Updated); !slices.Equal(got, want) || len(res.Created)+len(res.Deleted) != 0 {
		t.Fatalf("updated %v created %v deleted %v, want exactly %v", got, res.Created, res.Deleted, want)
	}
	after := e.versions(res)
	for k, v := range before {
		if !slices.Contains(want, k) && after[k] != v {
			t.Errorf("%s changed (rv %s → %s)", k, v, after[k])
		}
	}
	ds = e.mustGet(daemonSetRef(StorageNamespace, "topolvm-node"))
	sum, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "metadata", "annotations", lvmdChecksumAnnotation)
	cm := e.mustGet(ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: StorageNamespace, Name: "lvmd"})
	data, _, _ := unstructured.NestedString(cm.Object, "data", "lvmd.yaml")
	if ds.GetGeneration() != gen+1 || sum != assets.Sha256sum(data) || !strings.Contains(data, "volume-group: data") {
		t.Errorf("generation %d→%d, checksum %s, data %q", gen, ds.GetGeneration(), sum, data)
	}
	// Only the comment changes: same canonical config, so nothing rolls.
	mustWriteFile(t, o.LvmdPath, []byte("# another comment\ndevice-classes:\n- volume-group: data\n  name: default\n  default: true\n  spare-gb: 0\n"), 0o644)
	e.assertNoop(o, res)

	// Drift on a field the applier owns is put back; the create-only LVMCluster is not touched.
	dep := deploymentRef(StorageNamespace, "topolvm-controller")
	if _, err := e.ri(dep).Patch(context.Background(), dep.Name, "application/merge-patch+json", []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	res = e.apply(o)
	if got := refsNamed(res.Updated); !slices.Equal(got, []string{"Deployment.apps openshift-storage/topolvm-controller"}) {
		t.Errorf("after drift updated %v", got)
	}
	if r, _, _ := unstructured.NestedInt64(e.mustGet(dep).Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas = %d after re-apply, want 1", r)
	}
}

func TestUpgradeTopoLVMToLVMS(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	o416 := testOptions(t, "4.16")
	e.apply(o416)

	// A volume provisioned by TopoLVM must survive the switch.
	pv := ObjectRef{Version: "v1", Kind: "PersistentVolume", Name: "pvc-1"}
	pvc := ObjectRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "default", Name: "data"}
	lv := ObjectRef{Group: "topolvm.io", Version: "v1", Kind: "LogicalVolume", Name: "pvc-1"}
	for ref, obj := range map[ObjectRef]map[string]any{
		pv: {"spec": map[string]any{
			"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "storageClassName": "topolvm-provisioner",
			"csi": map[string]any{"driver": "topolvm.io", "volumeHandle": "abc", "fsType": "xfs"},
		}},
		pvc: {"spec": map[string]any{
			"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "topolvm-provisioner", "volumeName": "pvc-1",
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}},
		}},
		lv: {"spec": map[string]any{"name": "pvc-1", "deviceClass": "default", "size": "1Gi"}},
	} {
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(schema.GroupVersion{Group: ref.Group, Version: ref.Version}.String())
		u.SetKind(ref.Kind)
		u.SetName(ref.Name)
		u.SetNamespace(ref.Namespace)
		if _, err := e.ri(ref).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", ref, err)
		}
	}

	o417 := testOptions(t, "4.17")
	o417.LvmdPath, o417.RuntimeLvmdPath = o416.LvmdPath, o416.RuntimeLvmdPath
	res := e.apply(o417)
	if res.Era != EraLVMS {
		t.Fatalf("era %s", res.Era)
	}
	wantDeleted := []string{
		"Deployment.apps openshift-storage/topolvm-controller",
		"DaemonSet.apps openshift-storage/topolvm-node",
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node-scc",
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node",
		"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-controller",
		"RoleBinding.rbac.authorization.k8s.io openshift-storage/topolvm-controller",
		"Role.rbac.authorization.k8s.io openshift-storage/topolvm-controller",
		"ClusterRole.rbac.authorization.k8s.io topolvm-controller",
		"ClusterRole.rbac.authorization.k8s.io topolvm-node-scc",
		"ClusterRole.rbac.authorization.k8s.io topolvm-node",
		"ServiceAccount openshift-storage/topolvm-controller",
		"ServiceAccount openshift-storage/topolvm-node",
		"ConfigMap openshift-storage/lvmd",
	}
	if got := refsNamed(res.Deleted); !slices.Equal(got, wantDeleted) {
		t.Errorf("deleted\n%v\nwant\n%v", got, wantDeleted)
	}
	for _, r := range res.Deleted {
		if _, ok := e.get(r); ok {
			t.Errorf("%s still exists", r)
		}
	}
	for _, keep := range []ObjectRef{
		pv, pvc, lv,
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "logicalvolumes.topolvm.io"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Name: "topolvm-provisioner"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Name: "topolvm.io"},
		{Version: "v1", Kind: "Namespace", Name: StorageNamespace},
		deploymentRef(StorageNamespace, "lvms-operator"),
		{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"},
	} {
		e.mustGet(keep)
	}
	if cm := e.mustGet(ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "kube-public", Name: "lvms-version"}); cm.Object["data"].(map[string]any)["version"] != "v4.17.0-43" {
		t.Errorf("lvms-version = %v", cm.Object["data"])
	}
	e.assertNoop(o417, res)

	// 4.17 → 4.18 removes the snapshot webhook.
	o418 := testOptions(t, "4.18")
	o418.LvmdPath, o418.RuntimeLvmdPath = o416.LvmdPath, o416.RuntimeLvmdPath
	res = e.apply(o418)
	if len(res.Deleted) != len(snapshotWebhookObjects) {
		t.Errorf("4.18 deleted %v, want the %d snapshot webhook objects", refsNamed(res.Deleted), len(snapshotWebhookObjects))
	}
	e.assertNoop(o418, res)
}

func TestDriverNone(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	o.Storage = StorageConfig{Driver: DriverNone}
	mustWriteFile(t, o.LvmdPath, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n"), 0o644)
	res := e.apply(o)
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "lvmd config file exists") {
		t.Errorf("warnings %q", res.Warnings)
	}
	for _, r := range res.Created {
		if !strings.Contains(r.Name, "snapshot") {
			t.Errorf("driver none created %s", r)
		}
	}
	if _, ok := e.get(ObjectRef{Version: "v1", Kind: "Namespace", Name: StorageNamespace}); ok {
		t.Error("openshift-storage exists")
	}
	scs, err := e.dyn.Resource(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(scs.Items) != 0 {
		t.Errorf("storage classes: %v %v", scs, err)
	}
	if _, err := os.Stat(o.RuntimeLvmdPath); !os.IsNotExist(err) {
		t.Errorf("runtime lvmd copy written with driver none: %v", err)
	}

	// Nothing at all: only the reads that look for objects of an earlier start, which find the
	// snapshot controller applied above and report it.
	var c counter
	o.Storage.OptionalCSIComponents = []string{"none"}
	o.RESTConfig = c.wrap(e.cfg)
	res = e.apply(o)
	if _, muts := c.snapshot(); len(muts) != 0 || len(res.Created) != 0 || !slices.ContainsFunc(res.Remaining, snapshotControllerRef.SameObject) {
		t.Errorf("driver none + no snapshots: mutating %v, created %v, remaining %v", muts, res.Created, res.Remaining)
	}
	for _, r := range res.Remaining {
		if r.Namespace == StorageNamespace {
			t.Errorf("storage object %s remaining although storage never ran", r)
		}
	}
}

// Bad configuration and assets that identify no era are rejected before any request: the
// counting transport sees nothing, so nothing is applied or deleted. (A bad lvmd.yaml fails only
// the storage component: TestBadLvmdFailsStorageOnly.)
func TestBadConfigAppliesNothing(t *testing.T) {
	for name, mod := range map[string]func(o *Options){
		"storage":            func(o *Options) { o.Storage.Driver = "topolvm" },
		"prune with storage": func(o *Options) { o.Prune = true },
		"no storage dir": func(o *Options) {
			o.Assets = without(o.Assets, assets.StorageDir+"/")
		},
		"no snapshot dir": func(o *Options) {
			o.Assets = without(o.Assets, assets.SnapshotDir+"/")
		},
		"no era marker": func(o *Options) {
			o.Assets = without(o.Assets, assets.StorageDir+"/lvms_default-lvmcluster.yaml")
		},
		"image": func(o *Options) { o.Images = map[string]string{} },
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions(t, "4.18")
			mod(&o)
			var c counter
			o.RESTConfig = c.wrap(&rest.Config{Host: "https://127.0.0.1:1"})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := Apply(ctx, o)
			if err == nil {
				t.Fatal("Apply succeeded")
			}
			if total, _ := c.snapshot(); total != 0 {
				t.Errorf("%d requests sent before the error %v", total, err)
			}
			if _, statErr := os.Stat(o.RuntimeLvmdPath); !os.IsNotExist(statErr) {
				t.Errorf("runtime lvmd copy written despite %v", err)
			}
		})
	}
}

// The API server comes up after Apply starts: Apply retries until it answers.
func TestRetryUntilReachable(t *testing.T) {
	e := newEnv(t)
	target, err := url.Parse(e.cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	// Reserve a port, then close it so the first attempts are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := rest.CopyConfig(e.cfg)
	cfg.Host = "https://" + addr
	go func() {
		time.Sleep(1500 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("re-listening on %s: %v", addr, err)
			return
		}
		t.Cleanup(func() { l.Close() })
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go forward(c, target.Host)
		}
	}()
	o := testOptions(t, "4.18")
	o.RESTConfig = cfg
	start := time.Now()
	res := e.apply(o)
	if time.Since(start) < 1500*time.Millisecond || len(res.Created) == 0 {
		t.Errorf("apply took %s and created %d objects", time.Since(start), len(res.Created))
	}

	// Never reachable: the context deadline ends the retries with a clear error.
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	o.RESTConfig = &rest.Config{Host: "https://127.0.0.1:1"}
	if _, err := Apply(ctx, o); err == nil || !strings.Contains(err.Error(), "not reachable after") {
		t.Errorf("unreachable API: %v", err)
	}
}

func forward(c net.Conn, target string) {
	defer c.Close()
	u, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer u.Close()
	// A relay: either side closing ends it, and neither copy's error is the test's concern.
	go func() { _, _ = io.Copy(u, c) }()
	_, _ = io.Copy(c, u)
}

func TestConcurrentApply(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	var wg sync.WaitGroup
	results := make([]*Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := o
			o.RESTConfig = e.cfg
			results[i], errs[i] = Apply(context.Background(), o)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	created := len(results[0].Created) + len(results[1].Created)
	if n := len(results[0].Created) * len(results[1].Created); n != 0 || created < 20 {
		t.Errorf("created %d and %d objects; exactly one call should create them", len(results[0].Created), len(results[1].Created))
	}
	e.assertNoop(o, results[0])
}

func TestWaitReady(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	o.RESTConfig = e.cfg
	o.Wait, o.WaitTimeout, o.PollInterval = true, 2*time.Second, 100*time.Millisecond
	_, err := Apply(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "waiting for Deployment.apps openshift-storage/lvms-operator to be ready") {
		t.Fatalf("Apply with nothing running: %v", err)
	}

	// Play the controllers: the operator's vg-manager DaemonSet and rollout status.
	ctx := context.Background()
	ds := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "vg-manager", "namespace": StorageNamespace},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "vg-manager"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "vg-manager"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "vg-manager", "image": "x"}}},
			},
		},
	}}
	if _, err := e.ri(daemonSetRef(StorageNamespace, "vg-manager")).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []ObjectRef{deploymentRef(StorageNamespace, "lvms-operator"), daemonSetRef(StorageNamespace, "vg-manager"), snapshotControllerReady} {
		u := e.mustGet(ref)
		status := fmt.Sprintf(`{"status":{"observedGeneration":%d,"replicas":1,"updatedReplicas":1,"availableReplicas":1,"readyReplicas":1}}`, u.GetGeneration())
		if ref.Kind == "DaemonSet" {
			status = fmt.Sprintf(`{"status":{"observedGeneration":%d,"desiredNumberScheduled":1,"currentNumberScheduled":1,`+
				`"updatedNumberScheduled":1,"numberAvailable":1,"numberReady":1,"numberMisscheduled":0}}`, u.GetGeneration())
		}
		if _, err := e.ri(ref).Patch(ctx, ref.Name, "application/merge-patch+json", []byte(status), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("patching status of %s: %v", ref, err)
		}
	}
	o.WaitTimeout = 30 * time.Second
	if _, err := Apply(ctx, o); err != nil {
		t.Fatalf("Apply with ready workloads: %v", err)
	}
}

// A fresh node: the LVMS webhook matches the LVMCluster and nothing serves it (the operator
// pod cannot start before the CNI), yet Apply completes, because the LVMCluster is created
// before the webhooks are registered. If the webhook is already registered (an earlier boot)
// and the LVMCluster is missing, Apply retries the create until the webhook answers, here
// simulated by removing it.
func TestWebhookNotServingYet(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	const file = "components/lvms/lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml"
	data, err := fs.ReadFile(o.Assets, file)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("failurePolicy: Ignore"), []byte("failurePolicy: Fail"))
	data = bytes.ReplaceAll(data, []byte("key: namespace\n"), []byte("key: kubernetes.io/metadata.name\n"))
	o.Assets = overlay(o.Assets, map[string]string{file: string(data)})
	o.RESTConfig = e.cfg
	o.WaitTimeout = time.Minute

	if _, err := Apply(context.Background(), o); err != nil {
		t.Fatalf("first apply with a matching, unserved Fail webhook: %v", err)
	}
	lvmcluster := ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"}
	e.mustGet(lvmcluster)
	if err := e.ri(lvmcluster).Delete(context.Background(), lvmcluster.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := Apply(context.Background(), o)
		done <- err
	}()
	vwc := ObjectRef{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Name: "vlvmcluster.kb.io-lvms-operator"}
	time.Sleep(1500 * time.Millisecond) // let a few creates fail
	select {
	case err := <-done:
		t.Fatalf("Apply returned while the webhook could not be called: %v", err)
	default:
	}
	if err := e.ri(vwc).Delete(context.Background(), vwc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Apply: %v", err)
	}
	e.mustGet(lvmcluster)
	e.mustGet(vwc)
}

// Connection resets in the middle of an apply are retried; the result is the same as without.
func TestTransientErrorsRetried(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.16")
	var mu sync.Mutex
	writes := 0
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet {
				mu.Lock()
				writes++
				n := writes
				mu.Unlock()
				if n == 3 || n == 4 || n == 10 {
					return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
				}
			}
			return rt.RoundTrip(r)
		})
	})
	o.RESTConfig = cfg
	res := e.apply(o)
	if len(res.Created) < 20 {
		t.Fatalf("created %d objects", len(res.Created))
	}
	e.assertNoop(o, res)
}

// The wait for legacy objects is bounded (MicroShift's polled forever): with stuck objects (a
// finalizer nobody removes) Apply gives up after about DeleteTimeout, naming the object.
func TestLegacyDeleteStuck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	stuck := []ObjectRef{
		{Version: "v1", Kind: "ConfigMap", Namespace: StorageNamespace, Name: "lvmd"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "topolvm-controller"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: StorageNamespace, Name: "topolvm-node"},
		rbac("Role", StorageNamespace, "topolvm-controller"),
	}
	for _, ref := range append([]ObjectRef{{Version: "v1", Kind: "Namespace", Name: StorageNamespace}}, stuck...) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(schema.GroupVersion{Group: ref.Group, Version: ref.Version}.String())
		u.SetKind(ref.Kind)
		u.SetName(ref.Name)
		u.SetNamespace(ref.Namespace)
		if ref.Kind != "Namespace" {
			u.SetFinalizers([]string{"example.com/never-removed"})
		}
		// Created as MicroShift 4.16 did, so the applier may delete them.
		if _, err := e.ri(ref).Create(ctx, u, metav1.CreateOptions{FieldManager: "microshift"}); err != nil {
			t.Fatalf("creating %s: %v", ref, err)
		}
	}
	o := testOptions(t, "4.17")
	o.RESTConfig = e.cfg
	o.DeleteTimeout = 2 * time.Second
	start := time.Now()
	_, err := Apply(ctx, o)
	elapsed := time.Since(start)
	if err == nil || !slices.ContainsFunc(stuck, func(r ObjectRef) bool {
		return strings.Contains(err.Error(), "waiting for "+r.String()+" to be deleted")
	}) {
		t.Fatalf("Apply with undeletable legacy objects: %v, want an error naming one of them", err)
	}
	if elapsed > 6*time.Second {
		t.Errorf("gave up after %s, want about DeleteTimeout (%s)", elapsed, o.DeleteTimeout)
	}
}

// Discovery (the RESTMapper's first lookup, and again after the CRDs are established) is retried
// like any other request while the API server refuses connections (restarting), instead of
// failing the whole Apply; client-go itself retries only resets, not refusals.
func TestDiscoveryErrorsRetried(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	var mu sync.Mutex
	resets := 0
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/api" || r.URL.Path == "/apis" {
				mu.Lock()
				resets++
				n := resets
				mu.Unlock()
				if n <= 12 {
					return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNREFUSED}
				}
			}
			return rt.RoundTrip(r)
		})
	})
	o.RESTConfig = cfg
	res := e.apply(o)
	if len(res.Created) == 0 {
		t.Fatalf("created nothing")
	}
}

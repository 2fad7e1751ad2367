package attack

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/kubeconfig"
)

// fieldManager is the applier's server-side apply field manager: an object is MicroShift's only
// when this manager's Apply entry is in its managedFields (principle 3).
const fieldManager = "microshift-storage"

// cluster is the test API server of the apply rows.
type cluster struct {
	cfg *rest.Config
	dyn dynamic.Interface
	kc  string
}

// object is what invariant 3 remembers of a live object.
type object struct {
	gvr schema.GroupVersionResource
	u   *unstructured.Unstructured
}

// state lists every object of every listable, deletable resource, by "resource ns/name".
func (c *cluster) state(t *testing.T) map[string]object {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("discovery: %v", err)
	}
	out := map[string]object{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !has(r.Verbs, "list") || !has(r.Verbs, "delete") || r.Name == "events" {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := c.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				continue // an aggregated or racing API: nothing of ours lives there
			}
			for i := range items.Items {
				u := &items.Items[i]
				out[r.Name+" "+u.GetNamespace()+"/"+u.GetName()] = object{gvr: gvr, u: u}
			}
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// proven says why an object, as it was before a run, is not provably MicroShift's ("" when
// it is): principle 3 read from the object alone, independently of the applier's code —
// our manager's Apply entry, no other writer of its content, no mark of OLM, no controller
// other than an object that is itself proven ours.
func proven(o object, before map[string]object) string {
	u := o.u
	ours := false
	for _, mf := range u.GetManagedFields() {
		switch {
		case mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply:
			ours = true
		case mf.Subresource == "status":
		default:
			return "also written by " + mf.Manager + " (" + string(mf.Operation) + ")"
		}
	}
	if !ours {
		return "no server-side apply by " + fieldManager
	}
	for k := range u.GetLabels() {
		if strings.HasPrefix(k, "operators.coreos.com/") || strings.HasPrefix(k, "olm.owner") || k == "olm.managed" {
			return "labelled by OLM (" + k + ")"
		}
	}
	for _, ref := range u.GetOwnerReferences() {
		if ref.Kind == "ClusterServiceVersion" || strings.HasPrefix(ref.APIVersion, "operators.coreos.com/") {
			return "owned by an OLM CSV"
		}
		if ref.Controller != nil && *ref.Controller {
			if ref.Kind == "Namespace" {
				return "controlled by a Namespace, which is no workload"
			}
		}
	}
	return ""
}

// apiserverBookkeeping are the resources the API server itself keeps for others (a Service's
// cluster IP, its endpoints, leases): they go when their Service goes, deleted by the server,
// not by the run.
var apiserverBookkeeping = map[string]bool{"ipaddresses": true, "endpoints": true, "endpointslices": true, "leases": true, "events": true}

// checkCluster is invariant 3: no object the run deleted lacked proven ownership before it.
func checkCluster(t *testing.T, before, after map[string]object) {
	t.Helper()
	for key, o := range before {
		if _, ok := after[key]; ok || o.u.GetDeletionTimestamp() != nil || apiserverBookkeeping[o.gvr.Resource] {
			continue
		}
		if why := proven(o, before); why != "" {
			t.Errorf("invariant 3: %s deleted without proven ownership: %s", key, why)
		}
	}
}

// TestApply attacks apply against a real kube-apiserver: foreign look-alikes of MicroShift's
// objects a prune must leave, hostile files for each of its inputs, an API server that never
// answers and a signal in its wait. The rows run one after the other: they share the cluster.
func TestApply(t *testing.T) {
	skipShort(t)
	cfg := controlplanetest.Start(t)
	kc, err := kubeconfig.Write(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), kc: kc}
	assets := filepath.Join(filepath.Dir(testdata), "applier", "testdata", "eras", "4.18", "assets")
	apply := func(extra ...string) func(w *world) []string {
		return func(w *world) []string {
			return append([]string{"apply", "--kubeconfig", c.kc, "--assets", assets, "--lvmd", lvmdFile(w), "--runtime-lvmd", filepath.Join(w.out, "lvmd.yaml"),
				"--volume-groups", "rhel", "--timeout", "40s"}, extra...)
		}
	}
	none := func(extra ...string) func(w *world) []string {
		return func(w *world) []string {
			cfg := put(t, w.in, "config.yaml", "storage:\n  driver: none\n  optionalCsiComponents: [none]\n", 0o644)
			return apply(append([]string{"--config", cfg}, extra...)...)(w)
		}
	}
	rows := []row{
		{name: "plain/first apply", class: plain, args: apply(), want: exitOK},
		{name: "plain/second apply writes nothing", class: plain, args: apply(), want: exitOK},
		{name: "absent/--assets", class: absent, args: func(w *world) []string {
			a := apply()(w)
			a[4] = in(w, "assets")
			return a
		}, want: exitError, names: []string{"--assets", "assets"}},
		{name: "special/--lvmd a FIFO", class: special, args: func(w *world) []string {
			a := apply()(w)
			a[6] = fifoPath(t, w, "lvmd-fifo.yaml")
			return a
		}, want: exitError, names: []string{"lvmd-fifo.yaml"}},
		{name: "special/--config linked to /dev/zero", class: special, args: func(w *world) []string {
			return apply("--config", link(t, w.in, "config.yaml", "/dev/zero"))(w)
		}, want: exitError, names: []string{"config.yaml"}},
		{name: "special/--config a FIFO", class: special, args: func(w *world) []string {
			return apply("--config", fifoPath(t, w, "config.yaml"))(w)
		}, want: exitError, names: []string{"config.yaml"}},
		{name: "colliding/prune with foreign look-alikes", class: colliding, setup: func(t *testing.T, _ *world) { c.seedForeign(t) },
			args: none("--prune"), want: exitOK, after: func(t *testing.T, _ *world, _ result) { c.foreignSurvived(t) }},
	}
	runApplyRows(t, c, rows)
	t.Run("killed", func(t *testing.T) { applySignals(t, assets) })
}

func fifoPath(t *testing.T, w *world, name string) string { return fifo(t, w.in, name) }

// foreign are the look-alikes seedForeign makes, each someone else's by one proof.
var foreign = []struct {
	gvr                   schema.GroupVersionResource
	namespace, name, what string
}{
	{rbacGVR("clusterrolebindings"), "", "lvms-operator", "created by kubectl"},
	{rbacGVR("clusterroles"), "", "lvms-operator", "applied by our field manager with our annotations copied, labelled by OLM"},
	{rbacGVR("clusterroles"), "", "vg-manager", "created by kubectl with our annotations copied onto it"},
	{rbacGVR("roles"), "openshift-storage", "vg-manager", "written by a client calling itself microshift, with rules MicroShift never shipped"},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "openshift-storage", "vg-manager", "controlled by our Namespace"},
	{rbacGVR("roles"), "openshift-storage", "lvms-operator", "written by a client calling itself microshift, MicroShift's rules and one it never shipped"},
}

func rbacGVR(r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: r}
}

// seedForeign replaces MicroShift's objects with look-alikes (same name and content) that
// someone else wrote, one per proof of principle 3.
func (c *cluster) seedForeign(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ns, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, "openshift-storage", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range foreign {
		ri := c.dyn.Resource(f.gvr).Namespace(f.namespace)
		live, err := ri.Get(ctx, f.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		u := lookAlike(live)
		if err := ri.Delete(ctx, f.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, f.gvr, f.namespace, f.name)
		manager, apply := "kubectl-create", false
		switch i {
		case 1:
			// The example: our annotations (the applied-content record) copied onto
			// an object OLM labels as its own; only OLM's mark tells it from ours.
			u.SetAnnotations(live.GetAnnotations())
			u.SetLabels(map[string]string{"olm.owner": "lvms-operator.v4.18.0", "olm.owner.kind": "ClusterServiceVersion"})
			manager, apply = fieldManager, true
		case 2:
			u.SetAnnotations(live.GetAnnotations())
		case 3:
			// A Role of MicroShift's pre-applier name by a client calling itself microshift,
			// with rules MicroShift never shipped: not its content.
			u.Object["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}
			manager = "microshift"
		case 4:
			yes := true
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.GetName(), UID: ns.GetUID(), Controller: &yes}})
			manager = "someone"
		case 5:
			rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
			u.Object["rules"] = append(rules, map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}})
			manager = "microshift"
		}
		if apply {
			_, err = ri.Apply(ctx, f.name, u, metav1.ApplyOptions{FieldManager: manager, Force: true})
		} else {
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: manager})
		}
		if err != nil {
			t.Fatalf("seeding %s %s (%s): %v", f.gvr.Resource, f.name, f.what, err)
		}
	}
}

// lookAlike is live's content under its name, without server-set metadata.
func lookAlike(live *unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range live.Object {
		if k != "metadata" && k != "status" {
			u.Object[k] = v
		}
	}
	u.SetAPIVersion(live.GetAPIVersion())
	u.SetKind(live.GetKind())
	u.SetName(live.GetName())
	u.SetNamespace(live.GetNamespace())
	return u
}

func waitGone(t *testing.T, c *cluster, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if _, err := c.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s %s/%s not deleted", gvr.Resource, ns, name)
}

// foreignSurvived: each look-alike is still on the cluster after the prune.
func (c *cluster) foreignSurvived(t *testing.T) {
	t.Helper()
	for _, f := range foreign {
		if _, err := c.dyn.Resource(f.gvr).Namespace(f.namespace).Get(context.Background(), f.name, metav1.GetOptions{}); err != nil {
			t.Errorf("invariant 3: %s %s (%s) was deleted: %v", f.gvr.Resource, f.name, f.what, err)
		}
	}
}

// applySignals: apply against an API server that accepts connections and never answers is
// in its wait; SIGINT and SIGTERM end it at once with 130 and 143.
func applySignals(t *testing.T, assets string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 64)
	t.Cleanup(func() {
		_ = l.Close()
		close(held)
		for c := range held {
			_ = c.Close()
		}
	})
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case held <- conn:
			default:
				_ = conn.Close()
			}
		}
	}()
	var rows []row
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		rows = append(rows, row{name: s.sig.String() + " while the API server never answers", class: killed, mode: modeApply,
			args: func(w *world) []string {
				kc := put(t, w.in, "kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://"+l.Addr().String()+
					"\", insecure-skip-tls-verify: true}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n", 0o600)
				return []string{"apply", "--kubeconfig", kc, "--assets", assets, "--lvmd", lvmdFile(w), "--runtime-lvmd", filepath.Join(w.out, "lvmd.yaml"),
					"--volume-groups", "rhel", "--timeout", "10m", "-v", "1"}
			},
			when: &trigger{delay: 2 * time.Second, sig: s.sig}, want: s.code})
	}
	runRows(t, rows)
}

// runApplyRows runs apply rows against c with the cluster as part of the world: it is listed
// after the row's setup (the look-alikes it seeds), before the run, and held to invariant 3.
func runApplyRows(t *testing.T, c *cluster, rows []row) {
	t.Helper()
	for _, r := range rows {
		r.mode = modeApply
		t.Run(r.name, func(t *testing.T) {
			if r.setup != nil {
				r.setup(t, nil)
				r.setup = nil
			}
			before := c.state(t)
			r.run(t)
			checkCluster(t, before, c.state(t))
		})
	}
}

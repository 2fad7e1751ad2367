package attack

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/kubeconfig"
)

// legacyLookAlikes are objects of MicroShift's names written as its start-up code before the
// applier wrote them (a client calling itself microshift, a plain create: an Update entry),
// holding MicroShift's content and more: none was shipped so by any era, so a prune leaves
// each and says why (issue 28 principle 3: a legacy object is ours only when its content is
// within what an era shipped).
var legacyLookAlikes = []struct {
	gvr             schema.GroupVersionResource
	namespace, name string
	what            string
	more            func(u *unstructured.Unstructured)
}{
	{rbacGVR("roles"), "openshift-storage", "lvms-metrics", "MicroShift's rules and secrets get", func(u *unstructured.Unstructured) {
		appendElem(u, "rules", map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}})
	}},
	{rbacGVR("clusterroles"), "", "vg-manager", "a rule's verbs changed to *", func(u *unstructured.Unstructured) {
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		rules[0].(map[string]any)["verbs"] = []any{"*"}
		u.Object["rules"] = rules
	}},
	{rbacGVR("rolebindings"), "openshift-storage", "lvms-operator", "MicroShift's subject and one more", func(u *unstructured.Unstructured) {
		appendElem(u, "subjects", map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "default"})
	}},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "openshift-storage", "lvms-operator", "an image pull secret MicroShift never set", func(u *unstructured.Unstructured) {
		u.Object["imagePullSecrets"] = []any{map[string]any{"name": "someones-registry"}}
	}},
}

func appendElem(u *unstructured.Unstructured, field string, v any) {
	l, _, _ := unstructured.NestedSlice(u.Object, field)
	u.Object[field] = append(slices.Clone(l), v)
}

// TestApplyLegacyLookAlikes: prune after MicroShift's objects were replaced by legacy
// look-alikes holding more than MicroShift shipped (each row of legacyLookAlikes): exit 0,
// every look-alike still there and named with its reason, nothing unproven deleted.
func TestApplyLegacyLookAlikes(t *testing.T) {
	skipShort(t)
	cfg := controlplanetest.Start(t)
	kc, err := kubeconfig.Write(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), kc: kc}
	assets := filepath.Join(filepath.Dir(testdata), "applier", "testdata", "eras", "4.18", "assets")
	apply := func(config string) func(w *world) []string {
		return func(w *world) []string {
			args := []string{"apply", "--kubeconfig", c.kc, "--assets", assets, "--lvmd", lvmdFile(w), "--runtime-lvmd", filepath.Join(w.out, "lvmd.yaml"),
				"--volume-groups", "rhel", "--timeout", "40s"}
			if config != "" {
				args = append(args, "--config", put(t, w.in, "config.yaml", config, 0o644), "--prune")
			}
			return args
		}
	}
	rows := []row{
		{name: "plain/first apply", class: plain, args: apply(""), want: exitOK},
		{name: "colliding/prune with legacy look-alikes holding more than MicroShift shipped", class: colliding,
			setup: func(t *testing.T, _ *world) { c.seedLegacyLookAlikes(t) },
			args:  apply("storage:\n  driver: none\n  optionalCsiComponents: [none]\n"), want: exitOK,
			after: func(t *testing.T, _ *world, res result) { c.legacyLookAlikesKept(t, res) }},
	}
	runApplyRows(t, c, rows)
}

func (c *cluster) seedLegacyLookAlikes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, f := range legacyLookAlikes {
		ri := c.dyn.Resource(f.gvr).Namespace(f.namespace)
		live, err := ri.Get(ctx, f.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		u := lookAlike(live)
		u.SetLabels(live.GetLabels())
		f.more(u)
		if err := ri.Delete(ctx, f.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, c, f.gvr, f.namespace, f.name)
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: "microshift"}); err != nil {
			t.Fatalf("seeding %s %s (%s): %v", f.gvr.Resource, f.name, f.what, err)
		}
	}
}

func (c *cluster) legacyLookAlikesKept(t *testing.T, res result) {
	t.Helper()
	for _, f := range legacyLookAlikes {
		if _, err := c.dyn.Resource(f.gvr).Namespace(f.namespace).Get(context.Background(), f.name, metav1.GetOptions{}); err != nil {
			t.Errorf("invariant 3: %s %s (%s) was deleted: %v", f.gvr.Resource, f.name, f.what, err)
			continue
		}
		kept := slices.ContainsFunc(strings.Split(res.stdout+res.stderr, "\n"), func(l string) bool {
			return strings.Contains(l, "kept ") && strings.Contains(l, f.name+": ") && strings.Contains(l, "is not in what any era shipped")
		})
		if !kept {
			t.Errorf("%s %s (%s) not reported as kept with the reason; output:\n%s%s", f.gvr.Resource, f.name, f.what, res.stdout, res.stderr)
		}
	}
}

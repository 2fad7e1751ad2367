package applier

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func crdRef(name string) ObjectRef {
	return ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: name}
}

// assetCRD reads one CRD of the 4.17 test assets.
func assetCRD(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "eras", "4.17", "assets", "components", "lvms", file))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// MicroShift applies the storage CRDs itself (pkg/assets/crd.go, an update by its own field
// manager) before the applier runs. The applier leaves a CRD whose spec another manager wrote
// alone, says so, warns when it differs from the assets, still waits for it, and a restart writes
// nothing; a CRD someone only labelled stays the applier's.
func TestCRDAppliedByAnotherManagerIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ri := e.ri(crdRef("x"))

	// As MicroShift's resourceapply does: a create (an Update-operation manager), unchanged.
	lv := assetCRD(t, "topolvm.io_logicalvolumes.yaml")
	if _, err := ri.Create(ctx, lv, metav1.CreateOptions{FieldManager: "microshift"}); err != nil {
		t.Fatal(err)
	}
	// Another server-side applier, with a spec that differs from the assets.
	vg := assetCRD(t, "lvm.topolvm.io_lvmvolumegroups.yaml")
	versions, _, _ := unstructured.NestedSlice(vg.Object, "spec", "versions")
	if err := unstructured.SetNestedField(versions[0].(map[string]any), "an older description", "schema", "openAPIV3Schema", "description"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(vg.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Apply(ctx, vg.GetName(), vg, metav1.ApplyOptions{FieldManager: "kubectl", Force: true}); err != nil {
		t.Fatal(err)
	}
	// The API server writes status (Established) on its own; generation counts spec writes.
	before := map[string]int64{}
	for _, n := range []string{lv.GetName(), vg.GetName()} {
		before[n] = e.mustGet(crdRef(n)).GetGeneration()
	}

	o := testOptions(t, "4.17")
	res := e.apply(o)
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Object.Name+": "+s.Reason)
	}
	slices.Sort(skipped)
	want := []string{
		"logicalvolumes.topolvm.io: applied by another field manager (microshift); left to it",
		"lvmvolumegroups.lvm.topolvm.io: applied by another field manager (kubectl); left to it",
	}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "lvmvolumegroups.lvm.topolvm.io differs from the assets") {
		t.Errorf("warnings %q, want one for the CRD that differs", res.Warnings)
	}
	for n, gen := range before {
		u := e.mustGet(crdRef(n))
		if u.GetGeneration() != gen {
			t.Errorf("CRD %s was written (generation %d → %d)", n, gen, u.GetGeneration())
		}
		for _, mf := range u.GetManagedFields() {
			if mf.Manager == FieldManager {
				t.Errorf("CRD %s has fields managed by %s", n, FieldManager)
			}
		}
	}
	// The CRs that need the CRDs were applied, the other CRDs are the applier's.
	e.mustGet(ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"})
	if !slices.ContainsFunc(res.Created, func(r ObjectRef) bool { return r.SameObject(crdRef("lvmclusters.lvm.topolvm.io")) }) {
		t.Errorf("created %v, want the lvmclusters CRD", refsNamed(res.Created))
	}
	e.assertNoop(o, res)

	// Labels alone do not make a CRD someone else's: a changed asset still updates it.
	lc := crdRef("lvmclusters.lvm.topolvm.io")
	if _, err := e.ri(lc).Patch(ctx, lc.Name, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"team":"storage"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ri(lc).Patch(ctx, lc.Name, "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+AppliedHashAnnotation+`":"stale"}}}`), metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	res = e.apply(o)
	if !slices.ContainsFunc(res.Updated, func(r ObjectRef) bool { return r.SameObject(lc) }) {
		t.Errorf("updated %v, want %s (only labelled by someone else)", refsNamed(res.Updated), lc)
	}
}

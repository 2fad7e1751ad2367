package applier

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// goldenEras are the asset trees the rebase itself produces (testdata/golden/<ocp>/assets at the
// repository root); applying them proves the applier accepts real rebase output, quirks included.
func goldenEras(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		// Control-plane tests; the trees also live outside this module (test-compat copies only it).
		t.Skip("control-plane test skipped under -short")
	}
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*", "assets"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden asset trees under ../testdata/golden")
	}
	return dirs
}

func TestApplyGoldenEras(t *testing.T) {
	for _, dir := range goldenEras(t) {
		ocp := filepath.Base(filepath.Dir(dir))
		t.Run(ocp, func(t *testing.T) {
			e := newEnv(t)
			o := testOptions(t, "4.18")
			o.Assets = os.DirFS(dir)
			res := e.apply(o)
			if len(res.Created) == 0 || len(res.Updated)+len(res.Deleted) != 0 {
				t.Fatalf("first apply of %s: created %v updated %v deleted %v", dir, res.Created, res.Updated, res.Deleted)
			}
			t.Logf("%s: era %s, %d created, %d skipped %v", ocp, res.Era, len(res.Created), len(res.Skipped), res.Skipped)
			e.assertNoop(o, res)
			// Everything applied is proven the applier's afterwards: switching both components
			// off and pruning deletes it all and leaves nothing foreign behind.
			o.Storage = StorageConfig{Driver: DriverNone, OptionalCSIComponents: []string{ComponentNone}}
			o.Prune = true
			res = e.apply(o)
			if len(res.Foreign)+len(res.Kept)+len(res.Remaining) != 0 || len(res.Deleted) == 0 {
				t.Errorf("prune of everything applied: deleted %d, foreign %v, kept %v, remaining %v", len(res.Deleted), refsNamed(res.Foreign), res.Kept, refsNamed(res.Remaining))
			}
		})
	}
}

// The rebase's own 4.16 → 4.17 → 4.18 trees upgrade like the hand-written fixtures: TopoLVM
// workloads go, the SCC (served here by a stand-in CRD) goes, data and shared objects stay.
func TestUpgradeGolden(t *testing.T) {
	e := newEnv(t)
	installSCCCRD(t, e)
	golden := func(ocp string) fs.FS {
		return os.DirFS(filepath.Join("..", "testdata", "golden", ocp, "assets"))
	}
	o := testOptions(t, "4.16")
	o.Assets = golden("4.16")
	res := e.apply(o)
	if len(res.Skipped) != 0 {
		t.Errorf("skipped %v with the SCC API served", res.Skipped)
	}
	scc := ObjectRef{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints", Name: "topolvm-node"}
	e.mustGet(scc)
	e.assertNoop(o, res)

	o.Assets = golden("4.17")
	res = e.apply(o)
	if len(res.Deleted) != len(eraSpecs[0].legacy) {
		t.Errorf("4.17 deleted %d objects %v, want all %d legacy ones", len(res.Deleted), refsNamed(res.Deleted), len(eraSpecs[0].legacy))
	}
	if _, ok := e.get(scc); ok {
		t.Error("SCC topolvm-node kept")
	}
	e.mustGet(ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "logicalvolumes.topolvm.io"})
	e.assertNoop(o, res)

	o.Assets = golden("4.18")
	res = e.apply(o)
	if len(res.Deleted) != len(snapshotWebhookObjects) {
		t.Errorf("4.18 deleted %v, want the snapshot webhook", refsNamed(res.Deleted))
	}
	e.assertNoop(o, res)
}

// installSCCCRD serves security.openshift.io/v1 SecurityContextConstraints the way OpenShift's
// API does for the applier's purposes: cluster-scoped, fields at the top level.
func installSCCCRD(t *testing.T, e *env) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: securitycontextconstraints.security.openshift.io
  annotations:
    api-approved.openshift.io: https://github.com/openshift/api/pull/470
spec:
  group: security.openshift.io
  names: {kind: SecurityContextConstraints, listKind: SecurityContextConstraintsList, plural: securitycontextconstraints, singular: securitycontextconstraints}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`), &crd.Object); err != nil {
		t.Fatal(err)
	}
	ref := ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.GetName()}
	if _, err := e.ri(ref).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.mapper.Reset()
		if _, err := e.mapper.RESTMapping(schema.GroupKind{Group: "security.openshift.io", Kind: "SecurityContextConstraints"}, "v1"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("SCC CRD never served")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package applier

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// openShiftOnlyKinds are cluster-scoped kinds neither kube-apiserver nor the assets' CRDs serve.
var openShiftOnlyKinds = []string{"SecurityContextConstraints"}

// TestClusterScopedKindsMatchAPI checks eras.ClusterScoped, the one list the rebase uses to
// strip or set namespaces, against a real API server's discovery for built-in kinds and against
// the scope of the CRDs the assets ship, for every kind of the apply order.
func TestClusterScopedKindsMatchAPI(t *testing.T) {
	e := newEnv(t)
	dc := discovery.NewDiscoveryClientForConfigOrDie(e.cfg)
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	namespaced := map[string]bool{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			namespaced[r.Kind] = r.Namespaced
		}
	}
	for kind, ns := range crdScopes(t) {
		namespaced[kind] = ns
	}
	kinds := append(assets.Kinds(), eras.ClusterScopedKinds()...)
	for _, kind := range kinds {
		ns, known := namespaced[kind]
		switch {
		case !known && slices.Contains(openShiftOnlyKinds, kind):
			continue
		case !known:
			t.Errorf("kind %s is served neither by kube-apiserver nor by a CRD in the assets", kind)
		case eras.ClusterScoped(kind) == ns:
			t.Errorf("eras.ClusterScoped(%s) = %v, but the API says namespaced = %v", kind, eras.ClusterScoped(kind), ns)
		}
	}
	if !slices.IsSorted(eras.ClusterScopedKinds()) {
		t.Errorf("eras cluster-scoped kinds are not sorted (ClusterScoped searches them): %v", eras.ClusterScopedKinds())
	}
}

// crdScopes maps the kind of every CRD in the test assets to whether it is namespaced.
func crdScopes(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(filepath.Join("testdata", "eras"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		docs, err := assets.DecodeDocs(p, data)
		if err != nil {
			return err
		}
		for _, u := range docs {
			if u.GetKind() == "CustomResourceDefinition" {
				kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
				scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
				out[kind] = scope == "Namespaced"
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package applier

import (
	"os/exec"
	"strings"
	"testing"
)

// MicroShift links this package into its binary: it must not drag in the rebase tool's registry,
// kustomize, OLM or controller-runtime dependencies.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"sigs.k8s.io/controller-runtime",
		"sigs.k8s.io/kustomize",
		"github.com/google/go-containerregistry",
		"github.com/operator-framework",
		"github.com/spf13/cobra",
		"github.com/lvms-rebase/lvms-rebase/rebase/source",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("applier depends on %s", dep)
			}
		}
	}
}

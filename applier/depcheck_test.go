package applier

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// heavyModules are the rebase tool's dependencies MicroShift must not inherit from the applier.
var heavyModules = []string{
	"sigs.k8s.io/controller-runtime",
	"sigs.k8s.io/kustomize",
	"github.com/google/go-containerregistry",
	"github.com/operator-framework",
	"github.com/spf13/cobra",
	"k8s.io/apiextensions-apiserver",
	"github.com/lvms-rebase/lvms-rebase/", // the root module: only the applier module itself
}

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
	for _, dep := range strings.Fields(string(out)) {
		if heavy(dep) && !strings.HasPrefix(dep, "github.com/lvms-rebase/lvms-rebase/applier") {
			t.Errorf("applier depends on %s", dep)
		}
		if testOnly[dep] {
			t.Errorf("applier links %s, which only tests may import", dep)
		}
	}
}

// testOnly are the packages MicroShift's binary must not link through the applier: the
// control-plane harness lives in this module for the tests of both modules, not for MicroShift.
var testOnly = map[string]bool{
	"testing": true,
	"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest": true,
}

// Every requirement of go.mod, test-only ones included, lands in an importer's module graph:
// the whole graph must be free of the heavy modules, and the language floor is MicroShift
// release-4.17's Go 1.22.
func TestModuleGraph(t *testing.T) {
	if testing.Short() {
		// go list -m all may need the module proxy, and test-compat's copies raise the go
		// directive where a client-go minor requires it.
		t.Skip("runs go list -m all")
	}
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(data); m == nil || !regexp.MustCompile(`^1\.22(\.\d+)?$`).Match(m[1]) {
		t.Errorf("go.mod: go directive %q, want 1.22 (MicroShift release-4.17)", m)
	}
	out, err := exec.Command("go", "list", "-m", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && heavy(f[0]) && f[0] != "github.com/lvms-rebase/lvms-rebase/applier" {
			t.Errorf("applier module graph requires %s", line)
		}
	}
}

func heavy(path string) bool {
	for _, h := range heavyModules {
		if strings.HasPrefix(path, h) {
			return true
		}
	}
	return false
}

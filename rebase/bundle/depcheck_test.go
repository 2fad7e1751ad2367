package bundle

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the parser free of operator-registry's heavy, cgo-pulling packages
// (containers/podman plumbing, sqlite, gpgme): the bundle is unpacked by the image source and
// only parsed here.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	banned := []string{
		"github.com/operator-framework/operator-registry/", // the provided-APIs check is ownedCRDsInBundle
		"github.com/operator-framework/operator-registry/alpha/action",
		"github.com/operator-framework/operator-registry/pkg/lib/bundle",
		"github.com/mattn/go-sqlite3",
		"github.com/proglottis/gpgme",
		"go.podman.io/",
		"github.com/containers/",
	}
	for _, dep := range strings.Split(string(out), "\n") {
		for _, b := range banned {
			if strings.HasPrefix(dep, b) {
				t.Errorf("rebase/bundle depends on %s", dep)
			}
		}
	}
}

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTestCodeLinked keeps test code out of the shipped binary: no testing package (it
// registers -test.* flags and pulls in the test runner), no operator-registry (a hundred
// packages for one check that bundle.Load does in a few lines), no fixture generator or
// loopback registry (hack/dev-registry serves the fixtures), no control-plane harness, and no package embedding
// files from a testdata/ directory.
func TestNoTestCodeLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .EmbedFiles}} {{.}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	banned := []struct{ prefix, why string }{
		{"testing", "the testing package"},
		{"github.com/operator-framework/operator-registry/", "operator-registry"},
		{"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry", "the test registry"},
		{"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures", "the fixture generator"},
		{"github.com/lvms-rebase/lvms-rebase/applier/controlplanetest", "the control-plane test harness"},
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100 {
		t.Fatalf("go list -deps listed %d packages; expected the whole build graph:\n%s", len(lines), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := fields[0]
		for _, b := range banned {
			if pkg == b.prefix || strings.HasPrefix(pkg, b.prefix+"/") || strings.HasSuffix(b.prefix, "/") && strings.HasPrefix(pkg, b.prefix) {
				t.Errorf("lvms-rebase links %s (%s)", b.why, pkg)
			}
		}
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "testdata/") || strings.Contains(f, "/testdata/") {
				t.Errorf("lvms-rebase links %s, which embeds test data %s", pkg, f)
			}
		}
	}
}

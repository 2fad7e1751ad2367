// Package binary builds the lvms-rebase command for tests that run it as a real process —
// signals, kills, hang detection, a second process racing the first — optionally with the
// write failpoints of rebase/tree (build tag FailpointsTag: LVMS_REBASE_PAUSE_AT=<step> pauses
// a write there). Test support only: it does not import testing.
package binary

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Package is the import path of the lvms-rebase main package.
const Package = "github.com/lvms-rebase/lvms-rebase/cmd/lvms-rebase"

// FailpointsTag is the build tag that compiles rebase/tree's failpoints in; release binaries
// never carry it.
const FailpointsTag = "lvmsrebase_failpoints"

// Build compiles lvms-rebase with the given build tags into dir and returns the binary's path.
func Build(dir string, tags ...string) (string, error) {
	bin := filepath.Join(dir, "lvms-rebase")
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, "-o", bin, Package)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (tags %v): %w\n%s", Package, tags, err, out)
	}
	return bin, nil
}

package app

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
)

// TestVersionCommand: `version` and `--version` print the same version; a plain `go build` in
// the git checkout (not stamped by -ldflags) prints the revision the toolchain recorded, and a
// stamped build its stamp.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runMain(t, args...)
		if code != ExitOK || out != "lvms-rebase "+version.String()+"\n" {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags []string
		want  func(*buildinfo.BuildInfo) string
	}{
		// What the toolchain recorded: the main module's version (Go 1.24+ derives a
		// pseudo-version, which names the revision, from a git checkout's HEAD), else the VCS
		// revision (Go records none in a linked worktree, whose .git is a file, or with
		// -buildvcs=false), else "dev".
		{"unstamped", nil, func(bi *buildinfo.BuildInfo) string {
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				return "lvms-rebase " + v + "\n"
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					return "lvms-rebase dev (revision " + s.Value
				}
			}
			return "lvms-rebase dev\n"
		}},
		{"stamped", []string{"-ldflags", "-X github.com/lvms-rebase/lvms-rebase/internal/version.Version=v9.8.7"},
			func(*buildinfo.BuildInfo) string { return "lvms-rebase v9.8.7" }},
	} {
		bin := filepath.Join(dir, tc.name)
		if out, err := exec.Command("go", append(append([]string{"build", "-buildvcs=auto"}, tc.flags...), "-o", bin, "..")...).CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "version").Output()
		if want := tc.want(bi); err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("%s: %q (%v), want %q", tc.name, out, err, want)
		}
	}
}

// version -o json|yaml prints a Version object shaped like the other commands' output.
func TestVersionMachineOutput(t *testing.T) {
	info := version.Get()
	for _, format := range []string{"json", "yaml"} {
		code, out, errOut := runMain(t, "version", "-o", format)
		var got map[string]any
		if err := yaml.Unmarshal([]byte(out), &got); err != nil || code != ExitOK {
			t.Fatalf("-o %s: exit %d, %v\n%s%s", format, code, err, out, errOut)
		}
		want := map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": "Version", "version": info.Version, "modified": info.Modified}
		if info.Revision != "" {
			want["revision"] = info.Revision
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-o %s (-want +got):\n%s", format, diff)
		}
	}
	if code, _, errOut := runMain(t, "version", "-o", "wide"); code != ExitUsage || !strings.Contains(errOut, "expected text, json or yaml") {
		t.Errorf("version -o wide: exit %d, %s", code, errOut)
	}
}

package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodesByType: exit 2 comes from the type of the error the flag layer returns (flag
// parsing, argument validation, unknown commands), never from its text. A tree whose path
// carries cobra's wording ("dir accepts x", "unknown command") fails with exit 1 as any
// other broken tree; each mistake on the command line exits 2.
func TestExitCodesByType(t *testing.T) {
	base := t.TempDir()
	treeNamed := func(name string) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		// Not usage errors, whatever their text says.
		{"tree named accepts", []string{"--ocp", "4.18", "--microshift-dir", treeNamed("dir accepts x")}, ExitError, "dir accepts x"},
		{"tree named unknown command", []string{"--ocp", "4.18", "--microshift-dir", treeNamed("unknown command y")}, ExitError, "unknown command y"},
		{"tree named requires at least", []string{"--ocp", "4.18", "--microshift-dir", treeNamed("requires at least 1 arg")}, ExitError, "requires at least"},
		{"tree named invalid argument", []string{"--ocp", "4.18", "--microshift-dir", treeNamed("invalid argument z")}, ExitError, "invalid argument z"},
		{"tree named unknown flag", []string{"--ocp", "4.18", "--microshift-dir", treeNamed("unknown flag --x")}, ExitError, "unknown flag --x"},
		// Mistakes on the command line, typed by the flag layer.
		{"unknown command", []string{"no-such-command"}, ExitUsage, `unknown command "no-such-command"`},
		{"argument to resolve", []string{"resolve", "extra"}, ExitUsage, `unknown command "extra" for "lvms-rebase resolve"`},
		{"argument to version", []string{"version", "extra"}, ExitUsage, "extra"},
		{"argument to outdated", []string{"outdated", "extra"}, ExitUsage, "extra"},
		{"argument to apply", []string{"apply", "extra"}, ExitUsage, "extra"},
		{"two files to lvmd check", []string{"lvmd", "check", "a", "b"}, ExitUsage, "expected one FILE"},
		{"unknown flag", []string{"--no-such-flag"}, ExitUsage, "unknown flag: --no-such-flag"},
		{"unknown shorthand", []string{"-Z"}, ExitUsage, "unknown shorthand flag"},
		{"flag without value", []string{"--ocp"}, ExitUsage, "flag needs an argument"},
		{"bad integer", []string{"--parallel", "many"}, ExitUsage, `invalid argument "many"`},
		{"bad duration", []string{"--timeout", "soon"}, ExitUsage, `invalid argument "soon"`},
		{"subcommand flag", []string{"version", "--no-such-flag"}, ExitUsage, "unknown flag"},
		{"argument to cobra's completion", []string{"completion", "bash", "extra"}, ExitUsage, `unknown command "extra"`},
		{"unknown lvmd subcommand", []string{"lvmd", "nosuch"}, ExitUsage, `unknown command "nosuch"`},
		{"typo of a command", []string{"resolv"}, ExitUsage, `unknown command "resolv"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(tc.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("lvms-rebase %q: exit %d, want %d with %q\nstderr:\n%s", tc.args, code, tc.code, tc.want, errOut.String())
			}
		})
	}
}

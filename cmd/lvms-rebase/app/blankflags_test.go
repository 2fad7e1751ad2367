package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryFlagGivenEmptyIsAUsageError: every flag of every command, given an empty or blank
// value (`--ocp "$OCP"` with OCP unset), exits 2 naming the flag before any work — never its
// default standing in (the tree's minor, "." as the checkout, $KUBECONFIG, a plain run for
// --branches). The table is the command tree itself, so a new flag brings its rows.
func TestEveryFlagGivenEmptyIsAUsageError(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	empty := t.TempDir()
	lvmd := filepath.Join(t.TempDir(), "lvmd.yaml")
	if err := os.WriteFile(lvmd, []byte("device-classes: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range runnableCommands(NewRootCommand(IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})) {
		path := strings.Fields(c.CommandPath())[1:]
		if c.Name() == "check" {
			path = append(path, lvmd) // lvmd check FILE
		}
		flags := append(flagsOf(c.Flags()), flagsOf(c.InheritedFlags())...)
		for _, f := range flags {
			seen[strings.Join(append(strings.Fields(c.CommandPath())[1:], "--"+f.Name), " ")] = true
			for _, v := range []string{"", " ", "\t"} {
				args := append(append(append([]string{}, path...), "--"+f.Name+"="+v), otherInputs(c, f.Name, empty)...)
				code, out, errOut := runMain(t, args...)
				if code != ExitUsage || !strings.Contains(errOut, "--"+f.Name) {
					t.Errorf("lvms-rebase %q: exit %d, want %d naming --%s\n%s%s", args, code, ExitUsage, f.Name, out, errOut)
				}
			}
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused run wrote into the checkout: %v", entries)
	}
	for _, want := range []string{"--ocp", "--pr-body", "--lvms", "--microshift-dir", "--branches", "resolve --ocp", "outdated --microshift-dir", "outdated --branches", "apply --kubeconfig", "lvmd check --volume-groups", "version --output"} {
		if !seen[want] {
			t.Errorf("%s was not tried (the walk of the command tree missed it)", want)
		}
	}
}

// TestListFlagsGivenAnEmptyItem: a list flag whose value, or one of whose repeated values, is
// empty or blank is refused: pflag drops an empty repeated value (`--branches a --branches ""`
// would be [a]), so the branch of the unset variable would silently not be rebased.
func TestListFlagsGivenAnEmptyItem(t *testing.T) {
	empty := t.TempDir()
	lvmd := filepath.Join(t.TempDir(), "lvmd.yaml")
	if err := os.WriteFile(lvmd, []byte("device-classes: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--branches", "main", "--branches", "", "--microshift-dir", empty}, "--branches"},
		{[]string{"--branches", "main,", "--microshift-dir", empty}, "--branches"},
		{[]string{"--branches", "main, ,release-4.18", "--microshift-dir", empty}, "--branches"},
		{[]string{"outdated", "--branches", "main", "--branches", "", "--microshift-dir", empty, "--offline"}, "--branches"},
		{[]string{"--ocp", "4.18", "--mirror", "quay.io=mirror.local/q", "--mirror", "", "--microshift-dir", empty, "--offline"}, "--mirror"},
		{[]string{"--ocp", "4.18", "--insecure-registry", " ", "--microshift-dir", empty, "--offline"}, "--insecure-registry"},
		{[]string{"lvmd", "check", lvmd, "--volume-groups", "vg1", "--volume-groups", ""}, "--volume-groups"},
		{[]string{"lvmd", "check", lvmd, "--volume-groups", "vg1,"}, "--volume-groups"},
		{[]string{"apply", "--kubeconfig", "/dev/null", "--assets", empty, "--volume-groups", ","}, "--volume-groups"},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.flag) {
			t.Errorf("lvms-rebase %q: exit %d, want %d naming %s\n%s%s", tc.args, code, ExitUsage, tc.flag, out, errOut)
		}
	}
}

// runnableCommands lists cmd and its descendants that run something, cobra's own help and
// completion commands left out.
func runnableCommands(cmd *cobra.Command) []*cobra.Command {
	var all []*cobra.Command
	if cmd.Runnable() && !cmd.Hidden && cmd.Name() != "help" && cmd.Name() != "completion" {
		all = append(all, cmd)
	}
	for _, c := range cmd.Commands() {
		all = append(all, runnableCommands(c)...)
	}
	return all
}

func flagsOf(fs *pflag.FlagSet) []*pflag.Flag {
	var all []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) { all = append(all, f) })
	return all
}

// otherInputs are the flags that keep a run from reaching anything real should the empty flag
// be taken: an empty directory as the checkout or assets, no network, no cluster.
func otherInputs(c *cobra.Command, tested, empty string) []string {
	var args []string
	for _, in := range [][]string{{"microshift-dir", empty}, {"assets", empty}, {"kubeconfig", "/dev/null"}, {"offline"}, {"ocp", "4.18"}} {
		if in[0] == tested || c.Flags().Lookup(in[0]) == nil {
			continue
		}
		if _, required := c.Flags().Lookup(in[0]).Annotations[cobra.BashCompOneRequiredFlag]; in[0] == "ocp" && !required {
			continue // resolve's required --ocp; the rebase's would exclude --branches
		}
		args = append(args, "--"+in[0])
		args = append(args, in[1:]...)
	}
	return args
}

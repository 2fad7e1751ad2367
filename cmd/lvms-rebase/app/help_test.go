package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpIsByteExact: every command's --help, as Main prints it, is the help cobra renders
// for that command and the text stored in testdata/help (a change to it is deliberate: -update
// rewrites them, and the diff is reviewed), and every flag's usage text appears in it verbatim — nothing rewrites
// output streams (credentials are redacted where URLs are formatted), so text that merely
// looks like a credential ("oci:PATH[:TAG|@DIGEST]") reaches the user as written.
func TestHelpIsByteExact(t *testing.T) {
	var cmds []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
	for _, c := range cmds {
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(append([]string{"root"}, path...), " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main(append(path, "--help"), IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != ExitOK {
				t.Fatalf("--help: exit %d\n%s", code, errOut.String())
			}
			// What cobra itself prints for the command, straight into a buffer.
			var want bytes.Buffer
			root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &want, ErrOut: &want})
			root.SetArgs(append(path, "--help"))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want.String() {
				t.Errorf("--help differs from cobra's rendering:\n got:\n%s\nwant:\n%s", out.String(), want.String())
			}
			checkHelpGolden(t, path, out.String())
			check := func(f *pflag.Flag) {
				_, usage := pflag.UnquoteUsage(f)
				for _, line := range strings.Split(usage, "\n") { // pflag indents continuation lines
					if !strings.Contains(out.String(), line) {
						t.Errorf("--%s: usage %q missing from --help:\n%s", f.Name, line, out.String())
					}
				}
			}
			c.LocalFlags().VisitAll(check)
			c.InheritedFlags().VisitAll(check)
		})
	}
	var out bytes.Buffer
	Main([]string{"--help"}, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	if !strings.Contains(out.String(), "oci:PATH[:TAG|@DIGEST]") {
		t.Errorf("root --help lacks the --lvms-bundle text oci:PATH[:TAG|@DIGEST]:\n%s", out.String())
	}
}

// checkHelpGolden compares a command's --help with testdata/help/<command path>.txt.
func checkHelpGolden(t *testing.T, path []string, got string) {
	t.Helper()
	file := filepath.Join("testdata", "help", strings.Join(append([]string{"lvms-rebase"}, path...), "_")+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/lvms-rebase/app -run TestHelpIsByteExact -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("--help differs from %s (-want +got):\n%s", file, diff)
	}
}

package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestArchFlag: every command's --arch is the one archFlag type (a list where several arches
// are resolved, one value for apply), and its mistakes are usage errors naming the flag.
func TestArchFlag(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	want := map[string]string{"lvms-rebase": "strings", "resolve": "strings", "outdated": "strings", "apply": "string"}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("arch"); f != nil {
			if _, ok := f.Value.(*archFlag); !ok {
				t.Errorf("%s --arch is a %T, want *archFlag", c.Name(), f.Value)
			} else if f.Value.Type() != want[c.Name()] {
				t.Errorf("%s --arch: type %s, want %s", c.Name(), f.Value.Type(), want[c.Name()])
			}
			delete(want, c.Name())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(want) > 0 {
		t.Errorf("commands without --arch: %v", want)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--ocp", "4.18", "--arch", "x86_64,mips"}, `invalid argument "x86_64,mips" for "--arch" flag: unknown architecture "mips" (want x86_64, aarch64, ppc64le or s390x)`},
		{[]string{"resolve", "--ocp", "4.18", "--arch", "x86_64", "--arch", "sparc"}, `"--arch" flag: unknown architecture "sparc"`},
		{[]string{"--ocp", "4.18", "--arch", ""}, `"--arch" flag: name at least one architecture`},
		{[]string{"apply", "--assets", dir, "--arch", "x86_64,aarch64"}, `"--arch" flag: expected one architecture, got x86_64,aarch64`},
		{[]string{"apply", "--assets", dir, "--arch", "amd64", "--arch", "arm64"}, `"--arch" flag: expected one architecture, got x86_64,aarch64`},
		{[]string{"apply", "--assets", dir, "--arch", "sparc"}, `unknown architecture "sparc"`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.err) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, ExitUsage, tc.err)
		}
	}
}

package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEmptyListsAreUsageErrors: every list flag of every command, given an empty list or an
// empty item, is a usage error naming it (exit 2); a real list passes. The flags are found
// by walking the command tree, so a list flag added later is covered. (On main before
// emptyLists, --volume-groups "" passed on apply and lvmd check.)
func TestEmptyListsAreUsageErrors(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if _, ok := fl.Value.(pflag.SliceValue); !ok {
				return
			}
			seen++
			for _, v := range []string{"", " ", ",", "a,,b", " , "} {
				if v == "a,,b" && fl.Value.Type() == "stringArray" {
					continue // one item, not split at commas: the flag's own parser judges it
				}
				cmd := fresh(t, c.CommandPath())
				if err := cmd.ParseFlags(withRequired(cmd, "--"+fl.Name+"="+v)); err != nil {
					continue // the flag's own parser refused it (--arch)
				}
				err := validateFlags(cmd, nil)
				var ec *exitCodeError
				if !errors.As(err, &ec) || ec.code != ExitUsage || !strings.Contains(err.Error(), "--"+fl.Name) {
					t.Errorf("%s --%s=%q: %v, want a usage error naming the flag", c.CommandPath(), fl.Name, v, err)
				}
			}
			cmd := fresh(t, c.CommandPath())
			if err := cmd.ParseFlags(withRequired(cmd, "--"+fl.Name+"=x86_64")); err != nil {
				t.Fatal(err)
			}
			if err := validateFlags(cmd, nil); err != nil {
				t.Errorf("%s --%s=x86_64: %v", c.CommandPath(), fl.Name, err)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(IOStreams{}))
	if seen < 5 {
		t.Fatalf("only %d list flags found", seen)
	}
}

// withRequired are args with a value for each required flag of c, so that only the list is
// wrong.
func withRequired(c *cobra.Command, args ...string) []string {
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if _, ok := fl.Annotations[cobra.BashCompOneRequiredFlag]; ok {
			args = append(args, "--"+fl.Name+"=x")
		}
	})
	return args
}

// fresh is the command at path in a new command tree (flags not yet parsed).
func fresh(t *testing.T, path string) *cobra.Command {
	t.Helper()
	root := NewRootCommand(IOStreams{})
	c, _, err := root.Find(strings.Fields(path)[1:])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

package app

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
)

// flagCompletions are the shell completions of flag values, by flag name, on every command
// that has the flag (cobra's `completion bash|zsh|fish|powershell` scripts call them through
// `__complete`). Values come from where they are declared: the era tables, the output
// formats, the payload rules, the architectures.
var flagCompletions = map[string]cobra.CompletionFunc{
	"ocp":        completeOCP,
	"lvms":       completeLVMS,
	"output":     fixedCompletion(output.Formats()...),
	"log-format": fixedCompletion(logFormats()...),
	"payload": fixedCompletion(rebase.PayloadTree+"\tthe pull specs of the tree's "+recorded.LastRebaseFile,
		rebase.PayloadNewest+"\tthe newest GA z common to every arch"),
	"arch": completeArch,
}

// registerCompletions registers flagCompletions on c and its subcommands.
func registerCompletions(c *cobra.Command) {
	for name, fn := range flagCompletions {
		if c.LocalNonPersistentFlags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fn)
		}
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

func fixedCompletion(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeOCP offers the OpenShift minors the era tables declare, each with its OCP era (the
// LVMS era depends on the LVMS minor resolution picks).
func completeOCP(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, m := range era.KnownMinors() {
		if r, err := era.OCPRowFor(m); err == nil {
			out = append(out, cobra.CompletionWithDesc(m, "era "+r.Name))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeLVMS offers the LVMS minors an era row declares, for the --ocp given when it is.
func completeLVMS(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ocp, _ := cmd.Flags().GetString("ocp")
	var out []cobra.Completion
	for _, m := range era.KnownMinors() {
		on := ocp
		if on == "" {
			on = m
		}
		if r, err := era.LVMSRowFor(m, on); err == nil {
			out = append(out, cobra.CompletionWithDesc(m, "era "+r.Name))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeArch offers the architectures in MicroShift's names; after "x86_64," the ones not
// yet listed, as the comma-separated list flag takes them.
func completeArch(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	names := arch.Known()
	if a, ok := cmd.Flags().Lookup("arch").Value.(*archFlag); ok && a.single {
		names = arch.Shipped()
	}
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	given := strings.Split(prefix, ",")
	var out []cobra.Completion
	for _, n := range names {
		if !slices.Contains(given, n) {
			out = append(out, prefix+n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/outdated"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
)

type outdatedFlags struct {
	source     SourceFlags
	provenance provenanceFlags
	repo       string
	branches   []string
	output     string
	logs       *logFlags
}

func newOutdatedCommand(streams IOStreams, logs *logFlags) *cobra.Command {
	f := &outdatedFlags{logs: logs}
	cmd := &cobra.Command{
		Use:   "outdated [--branches a,b]",
		Short: "Report which MicroShift branches lag the newest LVMS bundle or OCP payload",
		Long: `outdated reads each branch of a MicroShift clone from git, without checking it out: what
the branch records now (its lock file, else its bundle record last_rebase_lvms.sh or
last_lvms_rebase.sh and its release JSON) and what a plain rebase of it would pick today
(the LVMS minor policy, the newest bundle of that minor, and the payload rule: the branch's
last_rebase.sh, else the newest GA z). Registry tags are listed once per repository.

Default branches: every local branch named main, release-4.Y or release-5.Y whose tree has
assets/release/release-x86_64.json. Exit 0 when every branch is current, 3 when one lags,
1 when a branch could not be read (the others are still reported).`,
		Example: `  lvms-rebase outdated -a ~/.pull-secret.json
  lvms-rebase outdated --branches release-4.18,main -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOutdated(cmd.Context(), f, streams)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "microshift-dir", ".", "the MicroShift clone")
	fl.StringSliceVar(&f.branches, "branches", nil, "branches to check (comma-separated or repeated; default: main, release-4.Y, release-5.Y)")
	fl.StringVarP(&f.output, "output", "o", "text", "text, json or yaml")
	AddSourceFlags(fl, &f.source)
	// The rebase's signature flags, so that one set of flags serves outdated and the rebase
	// in CI (hack/lvms_rebase_job_entrypoint.sh): a branch whose lock was verified under
	// another policy than --signature-policy's is reported as such.
	fl.Var((*policyPath)(&f.provenance.policy), "signature-policy", "the containers-policy.json(5) file the rebase verifies signatures with (default: the built-in policy);\na branch whose lock was verified under another policy is reported as other-policy")
	fl.BoolVar(&f.provenance.allowUnsigned, "allow-unsigned", false, "the rebase's flag, accepted so one set of flags serves both in CI; outdated reports unsigned pins either way")
	fl.StringArrayVar(&f.provenance.stores, "signature-store", nil, "the rebase's flag, accepted so one set of flags serves both in CI; outdated reads each branch's lock and fetches no signature")
	return cmd
}

// runOutdated checks the branches. --branches given empty (an unset CI variable) is a usage
// error of the library (an empty list, not nil), never the default set.
func runOutdated(ctx context.Context, f *outdatedFlags, streams IOStreams) (err error) {
	if f.output != "text" && f.output != "json" && f.output != "yaml" {
		return usageError("-o/--output: expected text, json or yaml, got %q", f.output)
	}
	logger, err := f.logs.logger(streams.ErrOut)
	if err != nil {
		return err
	}
	opts, err := f.source.Options()
	if err != nil {
		return err
	}
	opts.Logger = logger
	ctx, cancel := commandContext(ctx, f.source.Timeout)
	defer cancel()
	defer func() { err = exitForInterrupt(ctx, err) }()
	policy, err := f.provenance.policyDigest()
	if err != nil {
		return err
	}
	rep, err := outdated.Check(ctx, outdated.Options{Repo: f.repo, Branches: f.branches, Source: opts, Policy: policy})
	if err != nil {
		return libraryError(err)
	}
	if ctx.Err() != nil {
		// The branches read after the signal are errors of the interruption, not of the branches.
		return fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	if err := printReport(streams.Out, f.output, rep); err != nil {
		return err
	}
	switch {
	case len(rep.Errors) > 0:
		// One Error line naming the branches, as --branches says its failures: with -o json
		// stderr said nothing else of them.
		return fmt.Errorf("%d of %d branches could not be checked: %s", len(rep.Errors), len(rep.Items), strings.Join(rep.Errors, ", "))
	case len(rep.Outdated) > 0:
		return exitQuietly(ExitDrift)
	}
	return nil
}

func printReport(w io.Writer, format string, rep *outdated.Report) error {
	if output.IsMachine(format) {
		return output.Write(w, format, output.BranchStatusList(rep))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BRANCH\tOCP\tLVMS\tBUNDLE\tPAYLOAD\tSIGNATURES\tSTATUS")
	for _, s := range rep.Items {
		status := s.Status
		if s.Reason != "" {
			status += ": " + s.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Branch, dash(s.OCP), dash(s.LVMS),
			arrow(s.Bundle), arrow(s.Payload), dash(s.Signatures), status)
	}
	return tw.Flush()
}

// arrow prints "current → newest", or one value when they agree.
func arrow(p outdated.Pair) string {
	switch {
	case p.Current == "" && p.Newest == "":
		return "–"
	case p.Current == p.Newest:
		return p.Current
	}
	return dash(p.Current) + " → " + dash(p.Newest)
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

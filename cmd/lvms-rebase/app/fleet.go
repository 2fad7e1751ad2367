package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/fleet"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
	"github.com/lvms-rebase/lvms-rebase/rebase"
)

// fleetExclusive are the flags that name one tree's inputs or another mode: each branch
// takes its own OpenShift minor and payloads, and a multi-branch run writes. Each is mutually
// exclusive with --branches (markRebaseGroups).
var fleetExclusive = []string{"ocp", "allow-base-mismatch", "lvms", "pr-body", "dry-run", "diff", "check", "ocp-release", "ocp-release-x86_64", "ocp-release-aarch64"}

// runFleet is `lvms-rebase --branches a,b`: each branch rebased in its own worktree of the
// clone (--microshift-dir), results on lvms-rebase/<b>.
func runFleet(cmd *cobra.Command, f *rebaseFlags, streams IOStreams) (err error) {
	if !cmd.Flags().Changed("branches") {
		return usageError("--pr-body-dir goes with --branches")
	}
	if err := checkOutput(f.output); err != nil {
		return err
	}
	if f.parallel < 1 {
		return usageError("--parallel %d: expected at least 1", f.parallel)
	}
	logger, srcOpts, err := sourceOptions(f.logs, &f.source, streams)
	if err != nil {
		return err
	}
	srcOpts.Progress = nil // branches download at once; their progress lines would interleave
	ctx, cancel := commandContext(cmd.Context(), f.source.Timeout)
	defer cancel()
	defer func() { err = exitForInterrupt(ctx, err) }()
	rep, err := fleet.Run(ctx, fleet.Options{Repo: f.microshiftDir, Branches: f.branches, PRBodyDir: f.prBodyDir, Parallel: f.parallel,
		Rebase: rebase.Options{Payload: f.payload, Source: srcOpts, SnapshotAssets: f.snapshotAssets, Commit: f.commit,
			Kustomize: lvmsrebase.Kustomize, ToolVersion: version.String(), Logger: logger, Provenance: f.provenance.options()}})
	f.logs.flush()
	if err != nil {
		return libraryError(err)
	}
	for _, wt := range rep.StaleWorktrees {
		logger.Warn("removed the worktree of an interrupted lvms-rebase run: " + wt)
	}
	if output.IsMachine(f.output) || !f.logs.quiet {
		if err := printFleet(streams.Out, f.output, rep); err != nil {
			return err
		}
	}
	if len(rep.Failed) > 0 {
		return fmt.Errorf("%d of %d branches failed: %s", len(rep.Failed), len(rep.Items), strings.Join(rep.Failed, ", "))
	}
	if ctx.Err() != nil {
		return fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	return nil
}

func printFleet(w io.Writer, format string, rep *fleet.Report) error {
	if output.IsMachine(format) {
		return output.Write(w, format, output.BranchRebaseList(rep))
	}
	var b strings.Builder
	printFleetText(&b, rep)
	// References are redacted where they are formatted (the rebase's results and errors).
	_, err := io.WriteString(w, b.String())
	return err
}

func printFleetText(b *strings.Builder, rep *fleet.Report) {
	for _, wt := range rep.StaleWorktrees {
		fmt.Fprintf(b, "removed the stale worktree %s\n", wt)
	}
	for _, it := range rep.Items {
		if it.Error != "" {
			fmt.Fprintf(b, "%s: error: %s\n", it.Branch, it.Error)
			continue
		}
		fmt.Fprintf(b, "%s: %s at %.12s", it.Branch, it.ResultBranch, it.Commit)
		if c := it.Result.Changes; c != nil && c.Changed() {
			fmt.Fprintf(b, " (%d added, %d changed, %d removed; bundle %s, payload %s)", len(c.Add), len(c.Change), len(c.Remove), it.Result.BundleVersion, it.Result.PayloadVersion)
		} else {
			b.WriteString(" (no changes)")
		}
		if it.PRBody != "" {
			fmt.Fprintf(b, ", PR body %s", it.PRBody)
		}
		b.WriteString("\n")
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// rebaseFlags are the flags of the main job, `lvms-rebase --ocp X.Y`.
type rebaseFlags struct {
	source         SourceFlags
	ocp            string
	lvms           string
	payload        string
	allowMismatch  bool
	microshiftDir  string
	snapshotAssets string
	dryRun         bool
	diff           bool
	check          bool
	output         string
	commit         bool
	prBody         string
	branches       []string
	prBodyDir      string
	parallel       int
	provenance     provenanceFlags
	logs           *logFlags
}

// provenanceFlags are the signature flags of a run (rebase.ProvenanceOptions).
type provenanceFlags struct {
	policy        string
	allowUnsigned bool
	stores        []string
}

// addProvenanceFlags registers the signature flags on fl.
func addProvenanceFlags(fl *pflag.FlagSet, f *provenanceFlags) {
	fl.Var((*policyPath)(&f.policy), "signature-policy", "containers-policy.json(5) file deciding whose signatures each image needs (default: the built-in policy, Red Hat's and\nOpenShift CI's keys, a signature required on every digest written; relative keyPath values are read next to the file)")
	fl.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "accept digests without a valid signature; the lock, -o json, the PR body and --check record them as unsigned")
	fl.StringArrayVar(&f.stores, "signature-store", nil, "signature store URL searched for payload signatures, <URL>/sha256=<hex>/signature-N (repeatable; replaces the defaults:\nthe official store and its mirror for quay.io/openshift-release-dev, the CI store for registry.ci.openshift.org)")
}

// policyPath is --signature-policy's value: a path, never empty (an empty value would
// silently mean the built-in policy).
type policyPath string

func (p *policyPath) String() string { return string(*p) }

func (p *policyPath) Set(s string) error {
	if s == "" {
		return errors.New("an empty path (leave the flag out for the built-in policy)")
	}
	*p = policyPath(s)
	return nil
}

func (p *policyPath) Type() string { return "string" }

// policyDigest is the digest of the policy the flags name ("built-in" without one); a file
// that does not load is bad input (exit 1, README "Exit codes").
func (f provenanceFlags) policyDigest() (string, error) {
	if f.policy == "" {
		return provenance.BuiltinSource, nil
	}
	p, err := provenance.LoadPolicy(f.policy)
	if err != nil {
		return "", inputError("signature-policy", err)
	}
	return p.Digest, nil
}

// options are the flags as the library's options.
func (f provenanceFlags) options() rebase.ProvenanceOptions {
	return rebase.ProvenanceOptions{PolicyFile: f.policy, AllowUnsigned: f.allowUnsigned, Stores: f.stores}
}

// configureRebase makes the root command itself run the rebase.
func configureRebase(root *cobra.Command, streams IOStreams, logs *logFlags) {
	f := &rebaseFlags{logs: logs}
	root.Use = "lvms-rebase [--ocp X.Y] [flags]"
	root.Example = `  lvms-rebase -a ~/.pull-secret.json        # in a MicroShift checkout: its OpenShift minor and last_rebase.sh payloads
  lvms-rebase --ocp 4.18 --diff
  lvms-rebase --check`
	fl := root.Flags()
	fl.StringVar(&f.ocp, "ocp", "", "OpenShift minor to rebase onto, X.Y (default: the minor of release.base in the tree's "+recorded.BaseFile+"; with --check the lock file's)")
	fl.BoolVar(&f.allowMismatch, "allow-base-mismatch", false, "accept an --ocp that differs from the tree's release.base minor (a branch whose OCP rebase has not run yet)")
	fl.StringVar(&f.lvms, "lvms", "", "force the LVMS bundle minor, X.Y (default: the OpenShift minor when published, else the newest published minor below it)")
	fl.StringVar(&f.payload, "payload", "", "payload rule: tree (the pull specs of the tree's "+recorded.LastRebaseFile+"; the default when it exists) or newest (newest GA z common to every arch); --ocp-release* pins win")
	fl.StringVar(&f.microshiftDir, "microshift-dir", ".", "root of the MicroShift checkout to write into")
	fl.StringVar(&f.snapshotAssets, "snapshot-assets", "",
		"where the csi-snapshot-controller operator assets come from: a per-file URL template with {commit} and {path} (only the files\nthe era reads are fetched), an archive URL template with {commit} (e.g. "+snapshot.ArchiveSource+"),\na directory or a tarball (default "+snapshot.DefaultSource+"; with --check the lock file's)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "resolve and render, print the plan (references, digests, files to add/change/remove); write nothing")
	fl.BoolVar(&f.diff, "diff", false, "like --dry-run, but print only the unified diff against the tree on stdout (git apply takes it; the count of changes goes to stderr); exit 3 when it shows differences")
	fl.BoolVar(&f.check, "check", false, "re-render from the lock file's inputs; exit 3 when the tree differs (CI verify step)")
	addOutputFlag(fl, &f.output)
	fl.BoolVar(&f.commit, "commit", false, "git-commit the changes in the MicroShift checkout per phase (lock, images, manifests)")
	fl.StringVar(&f.prBody, "pr-body", "", "write a markdown pull-request body describing the change to this file")
	fl.StringSliceVar(&f.branches, "branches", nil, "rebase these branches of the clone (comma-separated or repeated), each in its own temporary git worktree; the result of b goes on branch lvms-rebase/b")
	fl.StringVar(&f.prBodyDir, "pr-body-dir", "", "with --branches: write each branch's pull-request body to DIR/<branch>.md")
	fl.IntVar(&f.parallel, "parallel", 2, "with --branches: branches rebased at once")
	AddSourceFlags(fl, &f.source)
	addProvenanceFlags(fl, &f.provenance)
	markRebaseGroups(root)
	root.Args = cobra.NoArgs
	// The values of --ocp, --lvms, --payload and --microshift-dir are checked by the library
	// (rebase.Options.Validate), once; its *option.Error is a usage error here (libraryError).
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		// Given at all, even empty (an unset CI variable), --branches means a multi-branch run:
		// an empty list is its usage error, never a plain run on the checked-out branch.
		if cmd.Flags().Changed("branches") || cmd.Flags().Changed("pr-body-dir") {
			return runFleet(cmd, f, streams)
		}
		return runRebase(cmd.Context(), f, streams)
	}
}

// markRebaseGroups declares the flags that exclude each other (validated by validateFlags):
// one mode at a time, and --commit only when writing; --check re-renders from the lock file's
// inputs, so --lvms and --payload do not apply to it; --branches rebases each branch by its
// own tree's rules, so one tree's inputs and the other modes do not apply to it.
func markRebaseGroups(root *cobra.Command) {
	root.MarkFlagsMutuallyExclusive("dry-run", "diff", "check", "commit")
	root.MarkFlagsMutuallyExclusive("check", "lvms")
	root.MarkFlagsMutuallyExclusive("check", "payload")
	for _, name := range fleetExclusive {
		root.MarkFlagsMutuallyExclusive("branches", name)
	}
}

// mode is the run mode the flags select: write, or one of --dry-run, --diff, --check (which
// exclude each other, markRebaseGroups).
func (f *rebaseFlags) mode() rebase.Mode {
	switch {
	case f.dryRun:
		return rebase.ModeDryRun
	case f.diff:
		return rebase.ModeDiff
	case f.check:
		return rebase.ModeCheck
	}
	return rebase.ModeWrite
}

// sourceOptions builds the logger of the logging flags and the registry options of the source
// flags, with download progress (none with -q), for every command that pulls images.
func sourceOptions(logs *logFlags, sf *SourceFlags, streams IOStreams) (*slog.Logger, source.Options, error) {
	logger, err := logs.logger(streams.ErrOut)
	if err != nil {
		return nil, source.Options{}, err
	}
	srcOpts, err := sf.Options()
	if err != nil {
		return nil, source.Options{}, err
	}
	logger.Debug("image sources", "sources", sf.String())
	srcOpts.Logger = logger
	srcOpts.Progress = progressFor(logs, streams.ErrOut, logger)
	return logger, srcOpts, nil
}

// libraryError maps the libraries' typed errors to exit codes: a mistake in an option's value
// (*option.Error, spelled as its flag by flagnames.go) or another caller's mistake
// (rebase.ErrUsage) is a usage error.
func libraryError(err error) error {
	if rebase.IsUsage(err) {
		return WithExitCode(ExitUsage, err)
	}
	return err
}

func runRebase(ctx context.Context, f *rebaseFlags, streams IOStreams) (err error) {
	mode := f.mode()
	if err := checkOutput(f.output); err != nil {
		return err
	}
	logger, srcOpts, err := sourceOptions(f.logs, &f.source, streams)
	if err != nil {
		return err
	}

	ctx, cancel := commandContext(ctx, f.source.Timeout)
	defer cancel()
	defer func() { err = exitForInterrupt(ctx, err) }()

	res, err := rebase.Run(ctx, rebase.Options{
		OCP:               f.ocp,
		AllowBaseMismatch: f.allowMismatch,
		LVMS:              f.lvms,
		Payload:           f.payload,
		MicroShiftDir:     f.microshiftDir,
		Source:            srcOpts,
		SnapshotAssets:    f.snapshotAssets,
		Mode:              mode,
		Commit:            f.commit,
		PRBody:            f.prBody,
		Kustomize:         lvmsrebase.Kustomize,
		ToolVersion:       version.String(),
		Logger:            logger,
		Provenance:        f.provenance.options(),
	})
	f.logs.flush()
	if res != nil && (err == nil || res.Drift) {
		if perr := printResult(streams, f.output, f.logs, logger, res); perr != nil {
			return perr
		}
	}
	if err != nil {
		if errors.Is(err, rebase.ErrDrift) {
			return WithExitCode(ExitDrift, err)
		}
		if errors.Is(err, rebase.ErrPendingRecovery) {
			return fmt.Errorf("%w; run lvms-rebase without --%s to repair the tree, then --%s again", err, mode, mode)
		}
		return libraryError(err)
	}
	if mode == rebase.ModeDiff && res.Changes != nil && res.Changes.Changed() {
		return exitQuietly(ExitDrift)
	}
	return nil
}

// printProvenance says in one line what proved the run's digests.
func printProvenance(b *strings.Builder, rep *provenance.Report) {
	if rep == nil {
		return
	}
	counts := map[string]int{}
	for _, r := range rep.Records {
		counts[r.Status]++
	}
	policy := rep.Policy
	if rep.PolicyFile != "" {
		policy = rep.PolicyFile
	}
	fmt.Fprintf(b, "  signatures (policy %s): %d signed, %d covered by a payload, %d unsigned", policy,
		counts[provenance.StatusSigned], counts[provenance.StatusCovered], counts[provenance.StatusUnsigned])
	if ci := len(rep.CIOnly()); ci > 0 {
		fmt.Fprintf(b, ", %d CI-signed only", ci)
	}
	if rep.AllowUnsigned {
		b.WriteString(" (--allow-unsigned)")
	}
	b.WriteString("\n")
}

// printResult prints the result as -o asks. The text summary leaves the warnings out: each was
// printed on stderr when it arose (and -o json/yaml carry them as data). With -q (quiet) the
// text summary is left out too. --diff prints the patch alone on stdout, as kubectl diff does
// (git apply reads it), and its one line of counts on stderr as a record of the logger, so that
// it is in --log-format's format (every line JSON with json) and -q leaves it out.
func printResult(streams IOStreams, format string, logs *logFlags, log *slog.Logger, res *rebase.Result) error {
	if output.IsMachine(format) {
		return output.Write(streams.Out, format, output.RebaseResult(res))
	}
	if res.Mode == rebase.ModeDiff {
		if res.Changes != nil {
			log.Info(changesLine(res))
		}
		_, err := io.WriteString(streams.Out, res.Diff)
		return err
	}
	if logs.quiet {
		return nil
	}
	var b strings.Builder
	writeInputs(&b, res)
	fmt.Fprintf(&b, "  payload version %s, bundle version %s, snapshot assets %s\n", res.PayloadVersion, res.BundleVersion, res.SnapshotCommit)
	writeExcluded(&b, res, logs.verbosity)
	printProvenance(&b, res.Provenance)
	for _, d := range res.LockDrift {
		fmt.Fprintf(&b, "  lock drift: %s\n", d)
	}
	if p := res.Changes; p != nil {
		for _, x := range []struct {
			verb  string
			paths []string
		}{{"add", p.Add}, {"change", p.Change}, {"remove", p.Remove}} {
			for _, path := range x.paths {
				fmt.Fprintf(&b, "  %-6s %s\n", x.verb, path)
			}
		}
		if len(p.Change) > 0 {
			fmt.Fprintf(&b, "  %d changed in meaning, %d only in formatting\n", len(res.Semantic), len(res.Formatting))
		}
		printRecipeChanges(&b, res)
		printRBAC(&b, res)
		b.WriteString(changesLine(res) + "\n")
	}
	for _, c := range res.Commits {
		fmt.Fprintf(&b, "  committed: %s\n", c)
	}
	writeFetched(&b, res)
	_, err := io.WriteString(streams.Out, b.String())
	return err
}

// changesLine counts what the run wrote, would write, or found different.
func changesLine(res *rebase.Result) string {
	p := res.Changes
	switch {
	case !p.Changed() && len(res.Uncommitted) > 0:
		// The tree matches what the inputs render, not what is committed.
		return fmt.Sprintf("no changes to the tree (%d files up to date), but %d file(s) differ from HEAD and are not committed",
			len(p.Unchanged), len(res.Uncommitted))
	case !p.Changed():
		return fmt.Sprintf("no changes (%d files up to date)", len(p.Unchanged))
	}
	verb := map[rebase.Mode]string{rebase.ModeWrite: "wrote", rebase.ModeDryRun: "would write", rebase.ModeDiff: "would write", rebase.ModeCheck: "differs"}[res.Mode]
	return fmt.Sprintf("%s: %d added, %d changed, %d removed, %d unchanged", verb, len(p.Add), len(p.Change), len(p.Remove), len(p.Unchanged))
}

// writeExcluded says what of the bundle is not shipped: one line with the count, each object
// and why at -v 1 (-o json lists them as excluded, the PR body in "Bundle objects not
// shipped").
func writeExcluded(b *strings.Builder, res *rebase.Result, verbosity int) {
	switch n := len(res.Excluded); {
	case n == 0:
	case verbosity >= 1:
		for _, e := range res.Excluded {
			fmt.Fprintf(b, "  not shipped: %s %s (%s): %s\n", e.Kind, e.Name, e.File, e.Reason)
		}
	case n == 1:
		fmt.Fprintf(b, "  not shipped: 1 bundle object, by the era's rules (-v 1 says which)\n")
	default:
		fmt.Fprintf(b, "  not shipped: %d bundle objects, by the era's rules (-v 1 lists them)\n", n)
	}
}

// writeFetched sums what the run fetched and the time its steps worked.
func writeFetched(b *strings.Builder, res *rebase.Result) {
	var fetched int64
	var blobs, cached int
	for _, st := range res.Fetched {
		fetched += st.BytesFetched
		blobs += st.BlobsFetched
		cached += st.BlobsCached
	}
	fmt.Fprintf(b, "fetched %d bytes in %d blobs (%d blobs from the cache)\n", fetched, blobs, cached)
	var total time.Duration
	for _, ph := range res.Phases {
		total += ph.Duration
	}
	fmt.Fprintf(b, "took %s\n", total.Round(time.Millisecond))
}

// byDigest appends @digest to ref unless ref already names it (pins from the lock do).
func byDigest(ref, digest string) string {
	if strings.HasSuffix(ref, "@"+digest) {
		return ref
	}
	return ref + "@" + digest
}

// writeInputs prints what the run was based on: OpenShift minor and eras, the LVMS minor and
// why, the payload rule, and the resolved references.
func writeInputs(b *strings.Builder, res *rebase.Result) {
	fmt.Fprintf(b, "OpenShift %s (eras %s, %s)\n", res.OCP, res.Era, res.OCPEra)
	if c := res.LVMS; c != nil {
		fmt.Fprintf(b, "  lvms     %s (%s: %s)\n", c.Minor, c.Rule, c.Reason)
	}
	if res.PayloadRule != "" {
		fmt.Fprintf(b, "  payloads by rule %s", res.PayloadRule)
		if res.PayloadSource != "" {
			fmt.Fprintf(b, " (%s)", res.PayloadSource)
		}
		b.WriteString("\n")
	}
	if r := res.Resolution; r != nil {
		fmt.Fprintf(b, "  bundle   %s\n", byDigest(r.Bundle.Ref, r.Bundle.Digest))
		for _, p := range r.Payloads {
			fmt.Fprintf(b, "  payload  %s (%s, %s)\n", byDigest(p.Ref, p.Digest), p.Arch, p.Version)
		}
	}
}

// printRBAC says whether the RBAC changed and how many changes need a security review.
func printRBAC(b *strings.Builder, res *rebase.Result) {
	switch rv := res.RBAC; {
	case rv == nil:
	case !rv.Changed:
		b.WriteString("  rbac: unchanged\n")
	default:
		fmt.Fprintf(b, "  rbac: %d rules or bindings added or removed, %d needing security review\n", len(rv.Changes), len(rv.Escalations))
	}
}

func printRecipeChanges(b *strings.Builder, res *rebase.Result) {
	for _, c := range res.RecipeChanges {
		for _, f := range c.Added {
			fmt.Fprintf(b, "  recipe %s: lists assets/%s/%s\n", c.Recipe, c.Dir, f)
		}
		for _, f := range c.Dropped {
			fmt.Fprintf(b, "  recipe %s: dropped assets/%s/%s\n", c.Recipe, c.Dir, f)
		}
	}
}

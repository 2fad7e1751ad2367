package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

type resolveFlags struct {
	source SourceFlags
	ocp    string
	lvms   string
	output string
	logs   *logFlags
}

func newResolveCommand(streams IOStreams, logs *logFlags) *cobra.Command {
	f := &resolveFlags{logs: logs}
	cmd := &cobra.Command{
		Use:   "resolve --ocp X.Y",
		Short: "Print the bundle, payloads and per-arch image digests a rebase onto X.Y would use",
		Long: `resolve picks the newest LVMS bundle (vX.Y.Z[-N]) and the newest OCP payload (X.Y.Z-<arch>)
for an OpenShift minor, checks their versions, and resolves every relatedImage to its
manifest-list digest and per-arch child digests. It writes nothing except the image cache.`,
		Example: `  lvms-rebase resolve --ocp 4.18 -a ~/.pull-secret.json
  lvms-rebase resolve --ocp 4.18 -o json --mirror registry.redhat.io=mirror.local/rh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runResolve(cmd.Context(), f, streams)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ocp, "ocp", "", "OpenShift minor, X.Y")
	fl.StringVar(&f.lvms, "lvms", "", "force the LVMS bundle minor, X.Y (default: the OpenShift minor when published, else the newest published minor below it)")
	addOutputFlag(fl, &f.output)
	AddSourceFlags(fl, &f.source)
	_ = cmd.MarkFlagRequired("ocp")
	return cmd
}

func runResolve(ctx context.Context, f *resolveFlags, streams IOStreams) (err error) {
	if err := checkOutput(f.output); err != nil {
		return err
	}
	_, opts, err := sourceOptions(f.logs, &f.source, streams)
	if err != nil {
		return err
	}
	ctx, cancel := commandContext(ctx, f.source.Timeout)
	defer cancel()
	defer func() { err = exitForInterrupt(ctx, err) }()
	res, err := rebase.Resolve(ctx, rebase.ResolveOptions{OCP: f.ocp, LVMS: f.lvms, Source: opts})
	if err != nil {
		return libraryError(err)
	}
	if output.IsMachine(f.output) {
		return output.Write(streams.Out, f.output, output.Resolution(res))
	}
	return printResolution(streams.Out, res)
}

func printResolution(w io.Writer, r *source.Resolution) error {
	var b strings.Builder
	fmt.Fprintf(&b, "OpenShift %s\n", r.OCP)
	if c := r.LVMS; c != nil {
		fmt.Fprintf(&b, "lvms     %s (%s: %s)\n", c.Minor, c.Rule, c.Reason)
	}
	if r.PayloadRule != "" {
		fmt.Fprintf(&b, "payloads by rule %s\n", r.PayloadRule)
	}
	fmt.Fprintf(&b, "bundle   %s\n         digest %s (CSV version %s)\n", r.Bundle.Ref, r.Bundle.Digest, r.Bundle.CSVVersion)
	for _, p := range r.Payloads {
		fmt.Fprintf(&b, "payload  %-8s %s\n         digest %s", p.Arch, p.Ref, p.Digest)
		if p.ListDigest != "" {
			fmt.Fprintf(&b, " (list %s)", p.ListDigest)
		}
		fmt.Fprintf(&b, "\n         version %s\n", p.Version)
	}
	for _, ri := range r.RelatedImages {
		fmt.Fprintf(&b, "image    %s\n         %s\n", ri.Name, ri.Image)
		if ri.ListDigest != "" {
			fmt.Fprintf(&b, "         list     %s\n", ri.ListDigest)
		}
		for _, a := range ri.Arches {
			fmt.Fprintf(&b, "         %-8s %s\n", a.Arch, a.Digest)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

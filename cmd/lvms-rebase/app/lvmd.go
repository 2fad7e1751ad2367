package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/applier"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
)

// newLvmdCommand is `lvmd`, the lvmd.yaml tools; `lvmd check` is its only subcommand.
func newLvmdCommand(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lvmd",
		Short: "Check lvmd.yaml files (the storage configuration MicroShift reads)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("lvmd: expected a subcommand: check FILE")
		},
	}
	var vgs []string
	var format string
	check := &cobra.Command{
		Use:   "check FILE [--volume-groups VG,…]",
		Short: "Check an lvmd.yaml as MicroShift's storage start-up does, and against the host's volume groups",
		Long: `check validates FILE offline as the applier does at start-up (every TopoLVM lvmd field; unknown
fields, duplicate keys, wrong types and the rules lvmd enforces; one YAML document, since lvmd
reads only the first), then checks every device class against the host: its volume group must
exist, and a thin class's pool too. The host's groups come from vgs (and thin pools from lvs)
when LVM is installed, or from --volume-groups, e.g. when building an OS image with the file
baked in; without either the host is not checked, and the output says so. FILE must be a
regular file (or a link to one). Every problem is listed; any problem exits 1.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("lvmd check: expected one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLvmdCheck(cmd.Context(), streams, args[0], vgs, format)
		},
	}
	check.Flags().StringSliceVar(&vgs, "volume-groups", nil, "the host's volume groups, instead of running vgs (thin pools are then not checked)")
	addOutputFlag(check.Flags(), &format)
	cmd.AddCommand(check)
	return cmd
}

func runLvmdCheck(ctx context.Context, streams IOStreams, file string, vgs []string, format string) error {
	if err := checkOutput(format); err != nil {
		return err
	}
	data, err := applier.ReadLvmdFile(file)
	if err != nil {
		return fmt.Errorf("lvmd check: %w", err)
	}
	// The document is assembled here from the checks (api/v1alpha1 declares it).
	res := v1alpha1.LvmdCheck{TypeMeta: v1alpha1.Meta(v1alpha1.KindLvmdCheck), File: file, DeviceClasses: []string{}, Problems: []v1alpha1.LvmdProblem{}}
	cfg, problems := applier.LvmdProblems(file, data)
	res.Host.Skipped = "the file has problems"
	if cfg != nil {
		hostProblems, err := checkLvmdHost(ctx, file, cfg, vgs, &res.Host)
		if err != nil {
			return err
		}
		problems = append(problems, hostProblems...)
	}
	for _, p := range problems {
		res.Problems = append(res.Problems, v1alpha1.LvmdProblem{Field: p.Field, Reason: p.Reason})
	}
	if res.Valid = len(problems) == 0; res.Valid {
		for _, dc := range cfg.DeviceClasses {
			res.DeviceClasses = append(res.DeviceClasses, dc.Name)
		}
	}
	if output.IsMachine(format) {
		if err := output.Write(streams.Out, format, &res); err != nil {
			return err
		}
	} else {
		printLvmdCheck(streams.Out, problems, res)
	}
	if !res.Valid {
		return fmt.Errorf("%s: %d %s", file, len(problems), plural(len(problems), "problem"))
	}
	return nil
}

// checkLvmdHost checks cfg against the host's volume groups (--volume-groups, else vgs and lvs)
// and records in host what was checked, or why nothing was.
func checkLvmdHost(ctx context.Context, file string, cfg *applier.LvmdConfig, vgs []string, host *v1alpha1.LvmdHostCheck) ([]*applier.LvmdError, error) {
	var lister applier.VolumeGroupLister = applier.VGSLister{}
	host.Source, host.Skipped = "volume groups and thin pools from vgs and lvs", ""
	if vgs != nil {
		lister, host.Source = applier.StaticVolumeGroups(vgs), "volume groups from --volume-groups (thin pools not checked)"
	}
	problems, err := applier.CheckLvmdHost(ctx, file, cfg, lister)
	switch {
	case errors.Is(err, applier.ErrNoLVM):
		host.Source, host.Skipped = "", "LVM is not installed here (give --volume-groups)"
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("lvmd check %s: host check: %w", file, err)
	}
	host.Checked = true
	return problems, nil
}

func printLvmdCheck(out io.Writer, problems []*applier.LvmdError, res v1alpha1.LvmdCheck) {
	for _, p := range problems {
		fmt.Fprintf(out, "problem: %s\n", p)
	}
	if res.Host.Checked {
		fmt.Fprintf(out, "host: %s\n", res.Host.Source)
	} else {
		fmt.Fprintf(out, "host: not checked: %s\n", res.Host.Skipped)
	}
	if !res.Valid {
		return
	}
	names := strings.Join(res.DeviceClasses, ", ")
	if names == "" {
		names = "none, so storage is not deployed"
	}
	if res.Host.Checked {
		fmt.Fprintf(out, "%s: valid (device classes: %s)\n", res.File, names)
		return
	}
	fmt.Fprintf(out, "%s: valid as a file (device classes: %s); the host was NOT checked: %s\n", res.File, names, res.Host.Skipped)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

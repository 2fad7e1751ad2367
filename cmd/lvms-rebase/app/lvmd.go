package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/applier"
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
	check := &cobra.Command{
		Use:   "check FILE [--volume-groups VG,…]",
		Short: "Check an lvmd.yaml as MicroShift's storage start-up does, and against the host's volume groups",
		Long: `check validates FILE offline as the applier does at start-up (every TopoLVM lvmd field; unknown
fields, duplicate keys, wrong types and the rules lvmd enforces), then checks every device class
against the host: its volume group must exist, and a thin class's pool too. The host's groups
come from vgs (and thin pools from lvs) when LVM is installed, or from --volume-groups, e.g. when
building an OS image with the file baked in. Every problem is listed; any problem exits 1.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("lvmd check: expected one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLvmdCheck(cmd.Context(), streams, args[0], vgs)
		},
	}
	check.Flags().StringSliceVar(&vgs, "volume-groups", nil, "the host's volume groups, instead of running vgs (thin pools are then not checked)")
	cmd.AddCommand(check)
	return cmd
}

func runLvmdCheck(ctx context.Context, streams IOStreams, file string, vgs []string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return usageError("lvmd check: %v", err)
	}
	cfg, problems := applier.LvmdProblems(file, data)
	host := "not checked: the file has problems"
	if cfg != nil {
		var lister applier.VolumeGroupLister = applier.VGSLister{}
		host = "volume groups and thin pools from vgs and lvs"
		if vgs != nil {
			lister, host = applier.StaticVolumeGroups(vgs), "volume groups from --volume-groups (thin pools not checked)"
		}
		hostProblems, err := applier.CheckLvmdHost(ctx, file, cfg, lister)
		switch {
		case errors.Is(err, applier.ErrNoLVM):
			host = "not checked: LVM is not installed here (give --volume-groups)"
		case err != nil:
			return fmt.Errorf("lvmd check %s: host check: %w", file, err)
		}
		problems = append(problems, hostProblems...)
	}
	for _, p := range problems {
		fmt.Fprintf(streams.Out, "problem: %s\n", p)
	}
	fmt.Fprintf(streams.Out, "host: %s\n", host)
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d %s", file, len(problems), plural(len(problems), "problem"))
	}
	var names []string
	for _, dc := range cfg.DeviceClasses {
		names = append(names, dc.Name)
	}
	if len(names) == 0 {
		names = []string{"none, so storage is not deployed"}
	}
	fmt.Fprintf(streams.Out, "%s: valid (device classes: %s)\n", file, strings.Join(names, ", "))
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

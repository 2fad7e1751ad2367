package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
)

// newVersionCommand is `version`: the stamped version, else the build info's (module version,
// VCS revision and whether the tree was modified; internal/version).
func newVersionCommand(streams IOStreams) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the lvms-rebase version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(format); err != nil {
				return err
			}
			info := version.Get()
			if output.IsMachine(format) {
				return output.Write(streams.Out, format, output.Version(info))
			}
			_, err := fmt.Fprintf(streams.Out, "lvms-rebase %s\n", info.String())
			return err
		},
	}
	addOutputFlag(cmd.Flags(), &format)
	return cmd
}

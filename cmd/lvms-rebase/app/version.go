package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/version"
)

// newVersionCommand is `version`: the stamped version, else the build info's (module version,
// VCS revision and whether the tree was modified; internal/version).
func newVersionCommand(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the lvms-rebase version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(streams.Out, "lvms-rebase %s\n", version.String())
			return err
		},
	}
}

package app

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// emptyLists refuses a list flag given an empty list or an empty item (--volume-groups "",
// --mirror ",", an unset CI variable): an empty list is never "none" — taken so, it made
// apply deploy no storage ("LVM is not installed") and lvmd check report every volume group
// missing. Every list flag of every command is held to it here, in the flag layer, so a list
// flag added later is too.
func emptyLists(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		sv, ok := fl.Value.(pflag.SliceValue)
		if err != nil || !ok {
			return
		}
		items := sv.GetSlice()
		if len(items) == 0 {
			err = usageError("--%s: empty list: name at least one", fl.Name)
			return
		}
		for _, it := range items {
			// A repeatable flag's item is not split at commas: "," there is as empty.
			if strings.Trim(it, " \t,") == "" {
				err = usageError("--%s %q: an empty item in the list: name each one", fl.Name, strings.Join(items, ","))
				return
			}
		}
	})
	return err
}

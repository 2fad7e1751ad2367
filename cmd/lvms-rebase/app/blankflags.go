package app

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// An empty value is never "none" and never "the default": a flag given with an empty or
// blank value — mostly an unset CI variable, `--ocp "$OCP"` — would otherwise stand for the
// flag's default (the tree's minor, the checked-out branch, $KUBECONFIG…) and the run would do
// something the caller did not ask for. refuseBlankFlags makes it a usage error naming the flag;
// leaving the flag out is how its default is asked for.

// blankItems records, for the list flags, that a value given was blank: pflag's string slices
// drop an empty value (`--branches a --branches ""` is [a]), so the list alone cannot tell.
type blankItems struct {
	pflag.Value
	blank bool
}

func (b *blankItems) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		b.blank = true
	}
	return b.Value.Set(s)
}

// GetSlice, Append and Replace keep the wrapped list a pflag.SliceValue.
func (b *blankItems) GetSlice() []string { return b.Value.(pflag.SliceValue).GetSlice() }
func (b *blankItems) Append(s string) error {
	if strings.TrimSpace(s) == "" {
		b.blank = true
	}
	return b.Value.(pflag.SliceValue).Append(s)
}
func (b *blankItems) Replace(s []string) error { return b.Value.(pflag.SliceValue).Replace(s) }

// watchBlankItems wraps every string list flag of cmd and its subcommands in blankItems. Other
// flag values stay as they are (completion looks at *archFlag).
func watchBlankItems(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if _, ok := f.Value.(pflag.SliceValue); ok && (f.Value.Type() == "stringSlice" || f.Value.Type() == "stringArray") {
			f.Value = &blankItems{Value: f.Value}
			// pflag knows an empty list's default "[]" as "no default" only for its own
			// types; "" keeps --help from printing "(default [])" for the wrapped ones.
			if f.DefValue == "[]" {
				f.DefValue = ""
			}
		}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		watchBlankItems(c)
	}
}

// refuseBlankFlags returns a usage error for the first flag (in name order) given with an
// empty or blank value. A list flag's empty list or items are emptyLists' (listflags.go) and
// droppedBlankItems'.
func refuseBlankFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if _, list := f.Value.(*blankItems); err != nil || list {
			return
		}
		if strings.TrimSpace(f.Value.String()) == "" {
			err = usageError("--%s: an empty or blank value (an unset variable?); give one, or leave the flag out for its default", f.Name)
		}
	})
	return err
}

// droppedBlankItems refuses a repeated list flag one of whose values was empty: pflag drops
// it from the list, so emptyLists, which sees the list, cannot.
func droppedBlankItems(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if b, ok := f.Value.(*blankItems); ok && b.blank && err == nil {
			err = usageError("--%s %q: an empty item among the values given (an unset variable?): name each one", f.Name, strings.Join(b.GetSlice(), ","))
		}
	})
	return err
}

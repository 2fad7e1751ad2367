package app

import (
	"github.com/spf13/pflag"

	"github.com/lvms-rebase/lvms-rebase/internal/output"
)

// addOutputFlag adds -o/--output, spelled and valued as kubectl's: text for people, json or
// yaml for scripts (objects with apiVersion and kind, docs/output.md).
func addOutputFlag(fs *pflag.FlagSet, format *string) {
	fs.StringVarP(format, "output", "o", output.Text, "result format: text, json or yaml (json and yaml: docs/output.md)")
}

// checkOutput makes an unknown -o a usage error.
func checkOutput(format string) error {
	if err := output.Check(format); err != nil {
		return usageError("-o/--output: %v", err)
	}
	return nil
}

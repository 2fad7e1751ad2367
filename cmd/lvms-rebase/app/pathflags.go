package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// pathKind is what a flag's value names on this machine and whether the command reads or
// writes it. The exit-code rule for all of them is one (README "Exit codes"): the value itself
// (empty, blank) is the flag layer's usage error (exit 2); what it names — absent, unreadable,
// of the wrong kind (a directory for a file or the reverse, a FIFO, a socket, a device, a link
// to one), empty, over its cap, not parsing, not writable — is bad input, an error of the run
// (exit 1) naming the flag and the path, as kubectl's `-f missing` exits 1.
type pathKind int

const (
	// fileIn is a file read: a regular file (or a link to one) within its cap.
	fileIn pathKind = iota
	// fileInOptional is a file read when present; its absence has a documented meaning
	// (apply --lvmd: the volume groups vgs reports).
	fileInOptional
	// dirIn is a directory read.
	dirIn
	// sourceIn is a directory or a non-empty tarball, or a URL (--snapshot-assets).
	sourceIn
	// fileOut is a file written; its directory must exist.
	fileOut
	// dirOut is a directory written, made when absent.
	dirOut
)

// pathFlags are the flags, of every command, whose value is a path. Their shell completion
// completes files or directories (markPathFlags); TestFilePathExitCodes walks every flag of
// every command and fails on a flag that reads like a path but is not here.
var pathFlags = map[string]pathKind{
	"microshift-dir":   dirIn,
	"snapshot-assets":  sourceIn,
	"authfile":         fileIn,
	"registry-config":  fileIn,
	"idms-file":        fileIn,
	"signature-policy": fileIn,
	"cache-dir":        dirOut,
	"pr-body":          fileOut,
	"pr-body-dir":      dirOut,
	"assets":           dirIn,
	"kubeconfig":       fileIn,
	"config":           fileIn,
	"config-dir":       dirIn,
	"lvmd":             fileInOptional,
	"runtime-lvmd":     fileOut,
}

// markPathFlags gives the path flags of c and its subcommands cobra's file or directory
// completion.
func markPathFlags(c *cobra.Command) {
	for name, kind := range pathFlags {
		if c.LocalNonPersistentFlags().Lookup(name) == nil {
			continue
		}
		switch kind {
		case dirIn, dirOut:
			_ = c.MarkFlagDirname(name)
		default:
			_ = c.MarkFlagFilename(name)
		}
	}
	for _, sub := range c.Commands() {
		markPathFlags(sub)
	}
}

// inputError is a path flag's file that cannot be used: an error of the run (exit 1) naming
// the flag; err names the path.
func inputError(flag string, err error) error {
	return fmt.Errorf("--%s: %w", flag, err)
}

// checkDir is a dirIn flag's check before the command starts: path is a directory (or a link
// to one).
func checkDir(flag, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return inputError(flag, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--%s %s: %s, not a directory", flag, path, safefile.Kind(fi.Mode()))
	}
	return nil
}

// checkKubeconfigs reads each kubeconfig file client-go would load (the --kubeconfig list,
// else $KUBECONFIG's) through safefile before client-go does: client-go reads whatever a
// path names, so a FIFO would hang it and a link to /dev/zero exhaust memory. Absent files are
// client-go's to report; from names where the paths came from.
func checkKubeconfigs(paths []string, from string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); os.IsNotExist(err) {
			continue
		}
		if _, err := safefile.ReadFile(filepath.Clean(p), safefile.Options{Follow: true}); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	}
	return nil
}

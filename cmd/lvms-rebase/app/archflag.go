package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/arch"
)

// archFlag is the one type of every --arch flag: a list for the commands that resolve several
// architectures (comma-separated, repeated, or both, as pflag's string slices), one value for
// apply. Values are read in either spelling (amd64 or x86_64) and kept in MicroShift's, without
// duplicates; an unknown name is an invalid argument, a usage error naming the flag.
type archFlag struct {
	values []string
	// single allows one architecture (apply); changed is set by the first Set, which replaces
	// the default instead of adding to it.
	single  bool
	changed bool
}

// newArchList is --arch of the commands that resolve images: the shipped arches by default.
func newArchList() *archFlag { return &archFlag{values: arch.Shipped()} }

// newArch is apply's --arch: one architecture, none (this machine's) by default.
func newArch() *archFlag { return &archFlag{single: true} }

// Set adds the comma-separated architectures of s.
func (a *archFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errNoArch
	}
	if !a.changed {
		a.values, a.changed = nil, true
	}
	for _, name := range strings.Split(s, ",") {
		// Go names are accepted, but everything downstream (payload tags,
		// --ocp-release-<arch>, {arch}, outputs) speaks MicroShift's.
		m, err := arch.MicroShift(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		if !slices.Contains(a.values, m) {
			a.values = append(a.values, m)
		}
	}
	if a.single && len(a.values) > 1 {
		return fmt.Errorf("expected one architecture, got %s", strings.Join(a.values, ","))
	}
	return nil
}

// Type is the value's name in --help, as pflag's own types name it.
func (a *archFlag) Type() string {
	if a.single {
		return "string"
	}
	return "strings"
}

// String is the value as pflag shows defaults: "[x86_64,aarch64]" for a list, as a string
// slice prints.
func (a *archFlag) String() string {
	if a.single {
		return strings.Join(a.values, ",")
	}
	return "[" + strings.Join(a.values, ",") + "]"
}

// list returns the architectures.
func (a *archFlag) list() []string { return slices.Clone(a.values) }

// one returns the single architecture, "" when none was given.
func (a *archFlag) one() string {
	if len(a.values) == 0 {
		return ""
	}
	return a.values[0]
}

var errNoArch = errors.New("name at least one architecture")

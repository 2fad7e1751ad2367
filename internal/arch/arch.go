// Package arch converts between the two spellings of a CPU architecture: MicroShift's
// (x86_64, aarch64 — release-<arch>.json, payload tags, --arch, the lock) and Go/OCI's (amd64,
// arm64 — image platforms, runtime.GOARCH). The pairs are declared once, in the applier
// module's package eras (the applier maps runtime.GOARCH with them); everything in this module
// speaks MicroShift's names and converts here.
package arch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// Shipped are the architectures MicroShift ships release JSONs for, in MicroShift's order.
func Shipped() []string { return []string{"x86_64", "aarch64"} }

// Known lists every supported architecture by its MicroShift name (OCP publishes payloads
// for all of them; --ocp-release-<arch> exists for each).
func Known() []string {
	var out []string
	for _, a := range eras.Archs() {
		out = append(out, a.MicroShift)
	}
	return out
}

// Compare orders architectures as Known lists them (MicroShift's first, in MicroShift's order),
// unknown names last by name: the one order results list architectures in.
func Compare(a, b string) int {
	known := Known()
	i, j := slices.Index(known, a), slices.Index(known, b)
	if i < 0 {
		i = len(known)
	}
	if j < 0 {
		j = len(known)
	}
	if i != j {
		return cmp.Compare(i, j)
	}
	return strings.Compare(a, b)
}

// GoArch returns the Go/OCI name of an architecture given in either spelling.
func GoArch(name string) (string, error) {
	if a, ok := eras.LookupArch(name); ok {
		return a.GoArch, nil
	}
	return "", unknown(name)
}

// MicroShift returns MicroShift's name of an architecture given in either spelling.
func MicroShift(name string) (string, error) {
	if a, ok := eras.LookupArch(name); ok {
		return a.MicroShift, nil
	}
	return "", unknown(name)
}

func unknown(name string) error {
	return fmt.Errorf("unknown architecture %q (want x86_64, aarch64, ppc64le or s390x)", name)
}

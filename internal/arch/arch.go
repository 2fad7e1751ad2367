// Package arch is the one place that knows both spellings of a CPU architecture: MicroShift's
// (x86_64, aarch64 — release-<arch>.json, payload tags, --arch, the lock) and Go/OCI's (amd64,
// arm64 — image platforms, runtime.GOARCH). Everything outside speaks MicroShift's names and
// converts here.
package arch

import "fmt"

// names pairs each supported architecture's MicroShift name with its Go/OCI name.
var names = []struct{ microShift, goArch string }{
	{"x86_64", "amd64"},
	{"aarch64", "arm64"},
	{"ppc64le", "ppc64le"},
	{"s390x", "s390x"},
}

// Shipped are the architectures MicroShift ships release JSONs for, in MicroShift's order.
func Shipped() []string { return []string{"x86_64", "aarch64"} }

// Known lists every supported architecture by its MicroShift name (OCP publishes payloads
// for all of them; --ocp-release-<arch> exists for each).
func Known() []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n.microShift)
	}
	return out
}

// GoArch returns the Go/OCI name of an architecture given in either spelling.
func GoArch(name string) (string, error) {
	for _, n := range names {
		if name == n.microShift || name == n.goArch {
			return n.goArch, nil
		}
	}
	return "", unknown(name)
}

// MicroShift returns MicroShift's name of an architecture given in either spelling.
func MicroShift(name string) (string, error) {
	for _, n := range names {
		if name == n.microShift || name == n.goArch {
			return n.microShift, nil
		}
	}
	return "", unknown(name)
}

func unknown(name string) error {
	return fmt.Errorf("unknown architecture %q (want x86_64, aarch64, ppc64le or s390x)", name)
}

package arch

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ in, goArch, microShift string }{
		{"x86_64", "amd64", "x86_64"},
		{"amd64", "amd64", "x86_64"},
		{"aarch64", "arm64", "aarch64"},
		{"arm64", "arm64", "aarch64"},
		{"ppc64le", "ppc64le", "ppc64le"},
		{"s390x", "s390x", "s390x"},
	} {
		if g, err := GoArch(tc.in); err != nil || g != tc.goArch {
			t.Errorf("GoArch(%q) = %q, %v; want %q", tc.in, g, err, tc.goArch)
		}
		if m, err := MicroShift(tc.in); err != nil || m != tc.microShift {
			t.Errorf("MicroShift(%q) = %q, %v; want %q", tc.in, m, err, tc.microShift)
		}
	}
	for _, bad := range []string{"i386", "", "X86_64", "mips"} {
		if _, err := GoArch(bad); err == nil {
			t.Errorf("GoArch(%q) succeeded", bad)
		}
		if _, err := MicroShift(bad); err == nil {
			t.Errorf("MicroShift(%q) succeeded", bad)
		}
	}
	if !slices.Equal(Known(), []string{"x86_64", "aarch64", "ppc64le", "s390x"}) || !slices.Equal(Shipped(), []string{"x86_64", "aarch64"}) {
		t.Errorf("Known %v, Shipped %v", Known(), Shipped())
	}
	// Callers may append to what they get; the table must not change.
	s := Shipped()
	s[0] = "mips"
	if Shipped()[0] != "x86_64" {
		t.Error("Shipped returned shared storage")
	}
}

func TestCompare(t *testing.T) {
	got := []string{"s390x", "zzz", "aarch64", "ppc64le", "x86_64", "aaa"}
	slices.SortStableFunc(got, Compare)
	if want := []string{"x86_64", "aarch64", "ppc64le", "s390x", "aaa", "zzz"}; !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}

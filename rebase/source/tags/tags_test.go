package tags

import (
	"slices"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

func TestPickBundle(t *testing.T) {
	tags := []string{"latest", "v4.18", "v4.18.4", "v4.18.4-2", "v4.18.4-10", "v4.18.3-100", "v4.18.4-1000", "v4.18.4-rc1", "v4.17.9", "v4.16.0"}
	tests := []struct {
		minor, want, err string
	}{
		{"4.18", "v4.18.4-10", ""}, // numeric build order: 10 > 2; 1000 has 4 digits
		{"4.17", "v4.17.9", ""},
		{"4.99", "", "minors with tags: 4.16, 4.17, 4.18"},
	}
	for _, tc := range tests {
		got, err := PickBundle(tags, tc.minor, "repo")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.minor, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.minor, got, err, tc.want)
		}
	}
	// A bare vX.Y.Z loses to its own -N builds and to a newer Z.
	if got, _ := PickBundle([]string{"v4.18.10", "v4.18.9-99", "v4.18.10-1"}, "4.18", "r"); got != "v4.18.10-1" {
		t.Errorf("got %q", got)
	}
}

func TestPickPayload(t *testing.T) {
	tags := []string{"4.18.4-x86_64", "4.18.4-aarch64", "4.18.10-x86_64", "4.18.10-aarch64", "4.18.11-x86_64",
		"4.18.12-rc.1-x86_64", "4.18.12-rc.1-aarch64", "4.18.5-multi", "4.17.1-x86_64"}
	tests := []struct {
		name   string
		arches []string
		pre    bool
		want   string
		warn   string
		err    string
	}{
		{"newest GA on one arch", []string{"x86_64"}, false, "4.18.11", "", ""},
		{"arch lacking newest: newest common z, warned", []string{"x86_64", "aarch64"}, false, "4.18.10", "4.18.11 (x86_64 only)", ""},
		{"prerelease", []string{"x86_64", "aarch64"}, true, "4.18.12-rc.1", "", ""},
		{"numeric not lexical", []string{"aarch64"}, false, "4.18.10", "", ""},
		{"no common z", []string{"x86_64", "s390x"}, false, "", "", "no payload of 4.18 is published for every arch (x86_64, s390x) in repo: newest x86_64: 4.18.11; newest s390x: 4.18.3"},
	}
	tags = append(tags, "4.18.3-s390x")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warn, err := PickPayload(tags, "4.18", tc.arches, tc.pre, "repo")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if (tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) {
				t.Fatalf("warning %q, want one containing %q", warn, tc.warn)
			}
		})
	}
	if _, _, err := PickPayload(tags, "4.20", []string{"x86_64"}, false, "repo"); err == nil || !strings.Contains(err.Error(), "minors with tags: 4.17, 4.18") {
		t.Fatalf("error %v", err)
	}
}

func TestPickBundleTagIndependentOfTagOrder(t *testing.T) {
	tags := []string{"v4.17.3-010", "v4.17.3-10", "v4.17.3-9", "V4.17.9", "4.17.9", "v4.17.9-rc1"}
	for i := range tags {
		// Every rotation of the registry's order must give the same answer.
		rot := append(append([]string(nil), tags[i:]...), tags[:i]...)
		got, err := PickBundle(rot, "4.17", "repo")
		if err != nil || got != "v4.17.3-10" {
			t.Errorf("order %v: got %q, %v; want v4.17.3-10", rot, got, err)
		}
	}
}

func TestPickPayloadVersionExplainsEmptyMinor(t *testing.T) {
	tests := []struct {
		name string
		tags []string
		want []string
	}{
		{"multi only", []string{"4.18.5-multi", "4.18.4-multi", "4.17.1-x86_64"},
			[]string{"4.18 has tags for multi only", option.OCPRelease.String() + " repo:X.Y.Z-<suffix>"}},
		{"pre-release only", []string{"4.19.0-ec.2-x86_64", "4.19.0-rc.1-x86_64", "4.19.0-rc.1-aarch64"},
			[]string{"only pre-release tags", "e.g. 4.19.0-rc.1-x86_64", option.AllowPrerelease.String()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			minor := tc.tags[0][:4]
			_, _, err := PickPayload(tc.tags, minor, []string{"x86_64", "aarch64"}, false, "repo")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestBundleMinors(t *testing.T) {
	tests := []struct {
		tags []string
		want []string
	}{
		{nil, nil},
		{[]string{"latest", "v4.18", "v4.18.4-rc1"}, nil},
		{[]string{"v4.18.4-2", "v4.17.0", "v4.18.0", "v4.9.1", "4.16.0"}, []string{"4.17", "4.18", "4.9"}},
	}
	for _, tc := range tests {
		if got := BundleMinors(tc.tags); !slices.Equal(got, tc.want) {
			t.Errorf("BundleMinors(%v) = %v, want %v", tc.tags, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	tags := []string{"v4.18.4", "v4.18.5", "v4.17.4", "latest", "v4.18.40"}
	tests := []struct {
		want string
		n    int
		out  []string
	}{
		{"v4.18.4", 1, []string{"v4.18.4"}},
		{"v4.18.6", 2, []string{"v4.18.4", "v4.18.5"}}, // ties in lexical order
		{"v4.18.4", 10, []string{"v4.18.4", "v4.17.4", "v4.18.40", "v4.18.5", "latest"}},
	}
	for _, tc := range tests {
		if got := Nearest(tc.want, tags, tc.n); !slices.Equal(got, tc.out) {
			t.Errorf("Nearest(%q, %d) = %v, want %v", tc.want, tc.n, got, tc.out)
		}
	}
}

// TestPayloadVersion: a payload tag names its version without the suffix of its own arch
// (or -multi); a tag of another arch, or one that names no version, names none.
func TestPayloadVersion(t *testing.T) {
	const nightly = "4.17.0-0.nightly-2026-08-10-221652"
	for _, tc := range []struct{ tag, arch, want string }{
		{"4.18.10-x86_64", "x86_64", "4.18.10"},
		{"4.18.10-aarch64", "aarch64", "4.18.10"},
		{"4.18.10-multi", "x86_64", "4.18.10"},
		{"4.18.10-multi", "aarch64", "4.18.10"},
		{"4.20.0-rc.1-x86_64", "x86_64", "4.20.0-rc.1"},
		{"4.21.0-ec.2-aarch64", "aarch64", "4.21.0-ec.2"},
		// A nightly's tag is its version, the arm64 one included (its "-arm64-" is no suffix).
		{nightly, "x86_64", nightly},
		{"4.17.0-0.nightly-arm64-2026-08-10-180320", "aarch64", "4.17.0-0.nightly-arm64-2026-08-10-180320"},
		// Another arch's suffix stays: the version is then checked against release-metadata.
		{"4.18.10-aarch64", "x86_64", "4.18.10-aarch64"},
		{"latest", "x86_64", ""},
		{"", "x86_64", ""},
		{"4.18-x86_64", "x86_64", ""},
	} {
		if got := PayloadVersion(tc.tag, tc.arch); got != tc.want {
			t.Errorf("PayloadVersion(%q, %s) = %q, want %q", tc.tag, tc.arch, got, tc.want)
		}
	}
}

package rebase

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMinorOf(t *testing.T) {
	for in, want := range map[string]string{
		"4.18": "4.18", "4.18.12": "4.18", "5.0.0-0.nightly-2026-07-23-224236": "5.0",
		"5.0.0-0.nightly-arm64-2026-07-27-004356": "5.0", "4.22.0-ec.2": "4.22", "": "", "five": "",
	} {
		got, err := MinorOf(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("MinorOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseLastRebase(t *testing.T) {
	const x86 = "registry.ci.openshift.org/ocp/release-5:5.0.0-0.nightly-2026-07-23-224236"
	const arm = "registry.ci.openshift.org/ocp-arm64/release-arm64-5:5.0.0-0.nightly-arm64-2026-07-27-004356"
	cases := []struct {
		name, in, wantErr string
	}{
		{"microshift format", "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \"" + x86 + "\" \"" + arm + "\"\n", ""},
		{"single quotes, bare words", "#!/bin/bash\nscripts/auto-rebase/rebase.sh to '" + x86 + "' " + arm + "\n", ""},
		{"one arch only", "./scripts/auto-rebase/rebase.sh to \"" + x86 + "\"\n", "expected an x86_64 and an aarch64 release pull spec, got 1"},
		{"no rebase line", "#!/bin/bash -x\necho hello\n", "no `rebase.sh to"},
		{"lvms rebase is not it", "./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\"\n", "no `rebase.sh to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLastRebase([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), LastRebaseFile) {
					t.Fatalf("error %v, want %q naming %s", err, tc.wantErr, LastRebaseFile)
				}
				return
			}
			if err != nil || got["x86_64"] != x86 || got["aarch64"] != arm {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}

func TestChooseOCP(t *testing.T) {
	tree := func(base string) string {
		dir := t.TempDir()
		if base != "" {
			p := filepath.Join(dir, filepath.FromSlash(BaseFile))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(`{"release":{"base":"`+base+`"},"images":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	cases := []struct {
		name, base, given string
		allow             bool
		want, wantErr     string
	}{
		{"from a 5.0 nightly", "5.0.0-0.nightly-2026-07-23-224236", "", false, "5.0", ""},
		{"from an arm-style nightly", "4.22.0-0.nightly-arm64-2026-07-21-030405", "", false, "4.22", ""},
		{"given and equal", "4.22.0-0.nightly-2026-07-20-101112", "4.22", false, "4.22", ""},
		{"given and different", "5.0.0-0.nightly-2026-07-23-224236", "4.23", false, "", "--ocp 4.23 differs from the tree's OpenShift 5.0 (release.base 5.0.0-0.nightly-2026-07-23-224236"},
		{"different but allowed", "5.0.0-0.nightly-2026-07-23-224236", "4.23", true, "4.23", ""},
		{"no tree, given", "", "4.18", false, "4.18", ""},
		{"no tree, not given", "", "", false, "", "--ocp X.Y not given"},
		{"bad base", "latest", "", false, "", "release.base"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseOCP(tc.given, tree(tc.base), tc.allow)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrUsage) {
					t.Fatalf("error %v, want a usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

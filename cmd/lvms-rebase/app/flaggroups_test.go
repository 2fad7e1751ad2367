package app

import (
	"strings"
	"testing"
)

// TestFlagGroups: flags that exclude each other, and required flags, are cobra's flag groups
// (MarkFlagsMutuallyExclusive, MarkFlagRequired): each violation exits 2 before anything runs,
// and the message names the flags involved.
func TestFlagGroups(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		names []string
	}{
		{[]string{"--dry-run", "--diff"}, []string{"dry-run", "diff"}},
		{[]string{"--diff", "--check"}, []string{"diff", "check"}},
		{[]string{"--check", "--commit"}, []string{"check", "commit"}},
		{[]string{"--dry-run", "--commit"}, []string{"dry-run", "commit"}},
		{[]string{"--check", "--lvms", "4.18"}, []string{"check", "lvms"}},
		{[]string{"--check", "--payload", "tree"}, []string{"check", "payload"}},
		{[]string{"--branches", "main", "--ocp", "4.18"}, []string{"branches", "ocp"}},
		{[]string{"--branches", "main", "--check"}, []string{"branches", "check"}},
		{[]string{"--branches", "main", "--ocp-release-aarch64", "quay.io/x:1"}, []string{"branches", "ocp-release-aarch64"}},
		{[]string{"-q", "-v", "1"}, []string{"quiet", "v"}},
		{[]string{"apply"}, []string{`required flag(s) "assets" not set`}},
		{[]string{"resolve"}, []string{`required flag(s) "ocp" not set`}},
	} {
		code, out, errOut := runMain(t, append([]string{"--microshift-dir", dir}, tc.args...)...)
		if tc.args[0] == "apply" || tc.args[0] == "resolve" {
			code, out, errOut = runMain(t, tc.args...)
		}
		if code != ExitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want %d and nothing", tc.args, code, out, ExitUsage)
		}
		for _, n := range tc.names {
			if !strings.Contains(errOut, n) {
				t.Errorf("%q: stderr %q does not name %s", tc.args, errOut, n)
			}
		}
	}
}

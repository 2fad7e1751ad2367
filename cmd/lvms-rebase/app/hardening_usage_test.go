package app

import (
	"bytes"
	"strings"
	"testing"
)

// TestHardeningUsageErrors: each of these is a mistake on the command line; it must exit 2
// before anything is fetched, with the flag named and no credential echoed.
func TestHardeningUsageErrors(t *testing.T) {
	tree := t.TempDir()
	// A --microshift-dir that is not there is bad input, exit 1: TestFilePathExitCodes.
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--ocp", "4", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", "4.17.3", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", "v4.17", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", "04.17", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", "4.017", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", "4.17-rc", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--ocp", " 4.17", "--microshift-dir", tree}, "--ocp"},
		{[]string{"--check", "--ocp", "4.17.0", "--microshift-dir", tree}, "--ocp"},
		{[]string{"resolve", "--ocp", "4.17.3"}, "--ocp"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--mirror", "https://quay.io=mirror.local/q"}, "--mirror"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--mirror", "quay.io=canary-user:canary-pass@mirror.local/q"}, "--mirror"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--mirror", "quay.io=mirror.local/Q"}, "--mirror"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--lvms-bundle", "Quay.io/UPPER:tag"}, "--lvms-bundle"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--lvms-bundle", "quay.io/x"}, "--lvms-bundle"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--ocp-release", "quay.io/x:bad tag"}, "--ocp-release"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--ocp-release-repo", "quay.io/x:tag"}, "--ocp-release-repo"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--lvms-bundle-repo", "https://quay.io/x"}, "--lvms-bundle-repo"},
		{[]string{"--ocp", "4.17", "--microshift-dir", tree, "--lvms", "4.17.1"}, "--lvms"},
		{[]string{"apply", "--kubeconfig", "/dev/null", "--assets", tree, "--arch", "sparc"}, "--arch"},
		{[]string{"apply", "--kubeconfig", "/dev/null", "--assets", tree, "--wait-timeout", "-1s"}, "--wait-timeout"},
		{[]string{"apply", "--kubeconfig", "/dev/null", "--assets", tree, "--arch", "amd64x"}, "--arch"},
	} {
		var out, errOut bytes.Buffer
		code := Main(tc.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != ExitUsage {
			t.Errorf("lvms-rebase %q: exit %d, want %d (stderr %s)", tc.args, code, ExitUsage, errOut.String())
			continue
		}
		if !strings.Contains(errOut.String(), tc.flag) {
			t.Errorf("lvms-rebase %q: stderr does not name %s: %s", tc.args, tc.flag, errOut.String())
		}
		if strings.Contains(out.String()+errOut.String(), "canary") {
			t.Errorf("lvms-rebase %q: credentials echoed: %s", tc.args, errOut.String())
		}
		if tc.args[len(tc.args)-1] == "sparc" && !strings.Contains(errOut.String(), "x86_64") {
			t.Errorf("apply --arch: valid values not listed: %s", errOut.String())
		}
	}
}

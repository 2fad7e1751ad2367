package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// TestCompletions asks for completions as the shell scripts do (cobra's hidden __complete
// command) and checks the values offered come from their declarations.
func TestCompletions(t *testing.T) {
	var minors []string
	for _, m := range era.KnownMinors() {
		if _, err := era.OCPRowFor(m); err == nil {
			minors = append(minors, m)
		}
	}
	if len(minors) == 0 || minors[0] != "4.14" || !slices.Contains(minors, "5.0") {
		t.Fatalf("era tables give minors %v", minors)
	}
	for _, tc := range []struct {
		args []string
		want []string // values, in order
	}{
		{[]string{"--ocp", ""}, minors},
		{[]string{"resolve", "--ocp", ""}, minors},
		{[]string{"resolve", "--ocp", "4.16", "--lvms", ""}, []string{"4.15"}}, // MicroShift 4.16's only LVMS row
		{[]string{"-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"apply", "-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"outdated", "--output", ""}, []string{"text", "json", "yaml"}},
		{[]string{"--log-format", ""}, []string{"plain", "text", "json"}},
		{[]string{"--payload", ""}, []string{"tree", "newest"}},
		{[]string{"--arch", ""}, []string{"x86_64", "aarch64", "ppc64le", "s390x"}},
		{[]string{"--arch", "aarch64,"}, []string{"aarch64,x86_64", "aarch64,ppc64le", "aarch64,s390x"}},
		{[]string{"apply", "--arch", ""}, []string{"x86_64", "aarch64"}},
	} {
		code, out, errOut := runMain(t, append([]string{"__complete"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != ExitOK || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
			t.Errorf("%q: exit %d\n%s\n%s", tc.args, code, out, errOut)
			continue
		}
		var got []string
		for _, l := range lines[:len(lines)-1] {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: completes %q, want %q", tc.args, got, tc.want)
		}
	}
	// --lvms without --ocp offers every LVMS minor a row declares, 4.14 first.
	if _, out, _ := runMain(t, "__complete", "--lvms", ""); !strings.HasPrefix(out, "4.14\tera topolvm-4.14\n") || !strings.Contains(out, "4.21\tera lvms-4.20\n") {
		t.Errorf("--lvms completions:\n%s", out)
	}
	code, out, _ := runMain(t, "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "__start_lvms-rebase") {
		t.Errorf("completion bash: exit %d, not a bash completion script", code)
	}
}

package shrecord

import (
	"errors"
	"strings"
	"testing"
)

const (
	nightlyX86 = "registry.ci.openshift.org/ocp/release:4.18.0-0.nightly-2026-08-12-221652"
	nightlyArm = "registry.ci.openshift.org/ocp-arm64/release-arm64:4.18.0-0.nightly-arm64-2026-08-12-180320"
	gaX86      = "quay.io/openshift-release-dev/ocp-release:4.18.12-x86_64"
	gaArm      = "quay.io/openshift-release-dev/ocp-release:4.18.12-aarch64"
	script     = "./scripts/auto-rebase/rebase.sh"
)

// real is the line MicroShift's rebase.sh writes (release-4.18's record).
var real = script + ` to "` + nightlyX86 + `" "` + nightlyArm + `"`

var payloads = Spec{Scripts: []string{"rebase.sh"}, Sub: "to"}

func TestFind(t *testing.T) {
	cases := []struct {
		name, in string
		// want are the arguments of the invocation found (nil: none); wantLine its line.
		want     []string
		wantLine int
		// wantErr are substrings of the error, which always names the file.
		wantErr []string
	}{
		{name: "microshift format", in: "#!/bin/bash -x\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
		{name: "commented-out GA pair above", in: "#!/bin/bash -x\n# " + script + " to " + gaX86 + " " + gaArm + "\n" + real + "\n",
			want: []string{nightlyX86, nightlyArm}, wantLine: 3},
		{name: "echo'd GA pair above", in: "#!/bin/bash -x\necho " + script + " to " + gaX86 + " " + gaArm + "\n" + real + "\n",
			want: []string{nightlyX86, nightlyArm}, wantLine: 3},
		{name: "printf and a string", in: "printf '%s\\n' \"" + script + " to " + gaX86 + " " + gaArm + "\"\nmsg='" + script + " to a b'\n" + real + "\n",
			want: []string{nightlyX86, nightlyArm}, wantLine: 3},
		{name: "here-doc above", in: "cat <<EOF\n" + script + " to " + gaX86 + " " + gaArm + "\nEOF\n" + real + "\n",
			want: []string{nightlyX86, nightlyArm}, wantLine: 4},
		{name: "here-doc only", in: "cat <<'EOF' >notes\n" + real + "\nEOF\n"},
		{name: "continuation lines", in: "#!/bin/bash -x\n" + script + " \\\n  to \\\n  \"" + nightlyX86 + "\" \\\n  '" + nightlyArm + "'\n",
			want: []string{nightlyX86, nightlyArm}, wantLine: 2},
		{name: "backslash escapes and mixed quoting", in: script + " to reg\\istry.example.com/a:\"b\" 'c'd\n",
			want: []string{"registry.example.com/a:b", "cd"}, wantLine: 1},
		{name: "bash -x wrapper", in: "bash -x " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
		{name: "script path through a variable", in: "\"${ROOT}/scripts/auto-rebase/rebase.sh\" to a b\n", want: []string{"a", "b"}, wantLine: 1},
		{name: "after exit is never run", in: "exit 0\n" + real + "\n"},
		{name: "other sub-command", in: script + " manifests\n"},
		{name: "lvms script is not it", in: "./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\"\n"},
		{name: "two invocations", in: "#!/bin/bash -x\n" + script + " to " + gaX86 + " " + gaArm + "\n\n" + real + "\n",
			wantErr: []string{"line 4", "first is on line 2", "rebase.sh to"}},
		{name: "two on one line", in: real + "; " + real + "\n", wantErr: []string{"line 1", "first is on line 1"}},
		{name: "in a function", in: "f() {\n  " + real + "\n}\nf\n", wantErr: []string{"line 2", "not a plain top-level command"}},
		{name: "in a condition", in: "[ -x " + script + " ] && " + real + "\n", wantErr: []string{"line 1", "not a plain top-level command"}},
		{name: "in a command substitution", in: "echo \"$(" + real + ")\"\n", wantErr: []string{"line 1", "not a plain top-level command"}},
		{name: "in an unquoted here-doc's substitution", in: "cat <<EOF\n$(" + real + ")\nEOF\n", wantErr: []string{"line 2", "not a plain top-level command"}},
		{name: "variable argument", in: script + " to \"$X86\" " + nightlyArm + "\n", wantErr: []string{"line 1", "argument 1 (\"$X86\") is not a literal word"}},
		{name: "not bash", in: "#!/bin/bash\n" + script + " to \"" + nightlyX86 + "\n", wantErr: []string{"line 2", "not a bash script"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find("scripts/auto-rebase/last_rebase.sh", []byte(tc.in), payloads)
			if len(tc.wantErr) > 0 {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), "scripts/auto-rebase/last_rebase.sh") {
					t.Fatalf("error %v, want an *Error naming the file", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if got != nil {
					t.Fatalf("found %+v, want none", got)
				}
				return
			}
			if got == nil || strings.Join(got.Args, " ") != strings.Join(tc.want, " ") || got.Line != tc.wantLine {
				t.Fatalf("got %+v, want args %q on line %d", got, tc.want, tc.wantLine)
			}
		})
	}
}

// TestFindKeepsScriptAsWritten: a rewrite of the bundle record keeps the command word as the
// file spells it, for every name MicroShift's branches use.
func TestFindKeepsScriptAsWritten(t *testing.T) {
	lvms := Spec{Scripts: []string{"rebase_lvms.sh", "rebase-lvms.sh"}, Sub: "to"}
	for in, want := range map[string]string{
		"#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\"\n":    "./scripts/auto-rebase/rebase_lvms.sh",
		"#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.17.0-43\"\n": "./scripts/auto-rebase/rebase-lvms.sh",
		"\"$(dirname \"$0\")/rebase_lvms.sh\" to b\n": "\"$(dirname \"$0\")/rebase_lvms.sh\"",
	} {
		got, err := Find("last_rebase_lvms.sh", []byte(in), lvms)
		if err != nil || got == nil || got.Script != want {
			t.Errorf("Find(%q) = %+v, %v; want script %s", in, got, err, want)
		}
	}
}

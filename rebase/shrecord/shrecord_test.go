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
	shebang    = "#!/bin/bash -x\n"
)

// real is the line MicroShift's rebase.sh writes (release-4.18's record); ga is another
// invocation, the one a hostile or careless edit adds.
var (
	real = script + ` to "` + nightlyX86 + `" "` + nightlyArm + `"`
	ga   = script + " to " + gaX86 + " " + gaArm
)

var payloads = Spec{Scripts: []string{"rebase.sh"}, Sub: "to"}

// findCase is one record and what reading it must give: the arguments of the invocation bash
// runs (want, on wantLine), none (want nil, no wantErr), or an error naming the file and
// saying each of wantErr.
type findCase struct {
	name, in string
	want     []string
	wantLine int
	wantErr  []string
}

// evaluated are the records read exactly: plain sequential commands and the few wrappers
// whose effect is certain.
var evaluated = []findCase{
	{name: "microshift format", in: shebang + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "commented-out GA pair above", in: shebang + "# " + ga + "\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "echo'd GA pair above", in: shebang + "echo " + ga + "\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "printf and a string", in: "printf '%s\\n' \"" + ga + "\"\nmsg='" + script + " to a b'\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "here-doc above", in: "cat <<EOF\n" + ga + "\nEOF\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 4},
	{name: "here-doc only", in: "cat <<'EOF' >notes\n" + real + "\nEOF\n"},
	{name: "continuation lines", in: shebang + script + " \\\n  to \\\n  \"" + nightlyX86 + "\" \\\n  '" + nightlyArm + "'\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "backslash escapes and mixed quoting", in: script + " to reg\\istry.example.com/a:\"b\" 'c'd\n", want: []string{"registry.example.com/a:b", "cd"}, wantLine: 1},
	{name: "bash -x wrapper", in: "bash -x " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "sh -eu -- wrapper", in: "sh -eu -- " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "bash --norc wrapper", in: "bash --norc --posix " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "bash -o pipefail wrapper", in: "bash -o pipefail " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "command wrapper", in: "command " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "exec ends the script", in: "exec " + real + "\necho unreachable\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "script path through a variable", in: "\"${ROOT}/scripts/auto-rebase/rebase.sh\" to a b\n", want: []string{"a", "b"}, wantLine: 1},
	{name: "relative path without ./", in: "scripts/auto-rebase/rebase.sh to a b\n", want: []string{"a", "b"}, wantLine: 1},
	{name: "absolute path", in: "/home/me/microshift/scripts/auto-rebase/rebase.sh to a b\n", want: []string{"a", "b"}, wantLine: 1},
	{name: "quoted script path", in: "'./scripts/auto-rebase/rebase.sh' to a b\n", want: []string{"a", "b"}, wantLine: 1},
	{name: "environment assignment prefix", in: "DEBUG=1 " + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "output redirections", in: real + " >/dev/null 2>&1\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "set -euo pipefail and safe commands before", in: shebang + "set -euo pipefail\necho \"rebasing\"\nX=1\nexport Y=2\n: note\ntrue\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 8},
	{name: "shebang -e and echo before", in: "#!/bin/bash -xe\necho hi\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "cd before without set -e", in: "cd \"$(dirname \"$0\")/../..\"\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "a condition without the invocation", in: "if [ -n \"$CI\" ]; then echo ci; fi\nfor i in 1 2; do echo $i; done\n{ echo a; }\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 4},
	{name: "set -e with a failing command made safe", in: "set -e\ncd /tmp || true\n[ -d x ] && echo y\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 4},
	{name: "redirect-only exec", in: "exec 2>&1\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "exit after it", in: real + "\nexit 0\necho unreachable\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "an EXIT trap that echoes", in: "trap 'echo done' EXIT\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "eval of a plain echo", in: "eval 'echo hi'\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "other sub-command", in: script + " manifests\n"},
	{name: "command -v prints, runs nothing", in: "command -v " + script + " to a b\n"},
	{name: "Latin-1 comment", in: shebang + "# r\xe9sum\xe9 of the last rebase\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "Latin-1 in an echo", in: "echo caf\xe9\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 2},
	{name: "empty file"},
	{name: "comments only", in: shebang + "# nothing yet\n"},
	{name: "quoted and escaped sub-command", in: script + " 't'\\o a b\n", want: []string{"a", "b"}, wantLine: 1},
	{name: "trailing comment and semicolon", in: real + "; # done\n", want: []string{nightlyX86, nightlyArm}, wantLine: 1},
	{name: "env shebang and set -x", in: "#!/usr/bin/env bash\nset -x\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "UTF-8 comment", in: shebang + "# r\u00e9sum\u00e9 \u2713\n" + real + "\n", want: []string{nightlyX86, nightlyArm}, wantLine: 3},
	{name: "bare script name", in: "rebase.sh to a b\n", want: []string{"a", "b"}, wantLine: 1},
}

// refused are the records that bash could run otherwise than a plain reading says: each is an
// error naming its line, never skipped.
var refused = []findCase{
	{name: "two invocations", in: shebang + ga + "\n\n" + real + "\n", wantErr: []string{"line 4", "first is on line 2", "rebase.sh to"}},
	{name: "two on one line", in: real + "; " + real + "\n", wantErr: []string{"line 1", "first is on line 1"}},
	{name: "second through env", in: real + "\nenv FOO=1 " + ga + "\n", wantErr: []string{"line 2", "`env`"}},
	{name: "second through nohup", in: real + "\nnohup " + ga + "\n", wantErr: []string{"line 2", "`nohup`"}},
	{name: "second through timeout", in: real + "\ntimeout 1h " + ga + "\n", wantErr: []string{"line 2", "`timeout`"}},
	{name: "second through xargs", in: real + "\necho " + gaX86 + " " + gaArm + " | xargs " + script + " to\n", wantErr: []string{"line 2", "`xargs`"}},
	{name: "second through sudo", in: real + "\nsudo " + ga + "\n", wantErr: []string{"line 2", "`sudo`"}},
	{name: "second through builtin", in: real + "\nbuiltin command " + ga + "\n", wantErr: []string{"line 2", "`builtin`"}},
	{name: "second through time", in: real + "\ntime " + ga + "\n", wantErr: []string{"line 2", "not a plain top-level command"}},
	{name: "second through bash -c", in: real + "\nbash -c '" + ga + "'\n", wantErr: []string{"line 2", "inside `bash -c`"}},
	{name: "second through sh -c with quoting", in: real + "\nsh -xc 'rebase\"\".sh to a b'\n", wantErr: []string{"line 2", "inside `sh -c`"}},
	{name: "second through eval", in: real + "\neval \"" + ga + "\"\n", wantErr: []string{"line 2", "inside `eval`"}},
	{name: "second through eval, split words", in: real + "\neval " + ga + "\n", wantErr: []string{"line 2", "inside `eval`"}},
	{name: "eval of a variable", in: "eval \"$CMD\"\n" + real + "\n", wantErr: []string{"line 1", "eval", "not literal"}},
	{name: "second through a pipe into bash", in: real + "\necho '" + ga + "' | bash\n", wantErr: []string{"line 2", "`bash` reads its commands from standard input"}},
	{name: "second through a here-document into bash", in: real + "\nbash <<EOF\n" + ga + "\nEOF\n", wantErr: []string{"line 2", "`bash` reads its commands from standard input"}},
	{name: "second through a here-string into sh", in: real + "\nsh <<< '" + ga + "'\n", wantErr: []string{"line 2", "`sh` reads its commands from standard input"}},
	{name: "second through process substitution", in: real + "\nbash <(echo '" + ga + "')\n", wantErr: []string{"line 2", "bash", "not literal"}},
	{name: "second through an EXIT trap", in: "trap '" + ga + "' EXIT\n" + real + "\n", wantErr: []string{"line 1", "inside `trap`"}},
	{name: "trap of a variable", in: "trap \"$ACTION\" EXIT\n" + real + "\n", wantErr: []string{"line 1", "trap", "not literal"}},
	{name: "source", in: "source ./env.sh\n" + real + "\n", wantErr: []string{"line 1", "`source` runs another file"}},
	{name: "dot", in: ". ./env.sh\n" + real + "\n", wantErr: []string{"line 1", "`.` runs another file"}},
	{name: "bash runs another file", in: "bash ./other.sh\n" + real + "\n", wantErr: []string{"line 1", "runs another file"}},
	{name: "in a function", in: "f() {\n  " + real + "\n}\nf\n", wantErr: []string{"line 1", "function"}},
	{name: "function keyword", in: "function f { " + ga + "; }\nf\n" + real + "\n", wantErr: []string{"line 1", "function"}},
	{name: "a function shadowing echo", in: "echo() { exit 0; }\necho hi\n" + real + "\n", wantErr: []string{"line 1", "function"}},
	{name: "alias", in: "shopt -s expand_aliases\nalias r=" + script + "\nr to a b\n", wantErr: []string{"line 1", "expand_aliases"}},
	{name: "alias without shopt", in: "alias echo=" + script + "\n" + real + "\n", wantErr: []string{"line 1", "`alias`: a record defines no aliases"}},
	{name: "in a condition", in: "[ -x " + script + " ] && " + real + "\n", wantErr: []string{"line 1", "not a plain top-level command", "&& or || list"}},
	{name: "false && it", in: "false && " + real + "\n", wantErr: []string{"line 1", "not a plain top-level command"}},
	{name: "in an if", in: "if true; then\n  " + real + "\nfi\n", wantErr: []string{"line 2", "not a plain top-level command", "if"}},
	{name: "in a subshell", in: "( " + real + " )\n", wantErr: []string{"line 1", "subshell"}},
	{name: "in a group", in: "{ " + real + "; }\n", wantErr: []string{"line 1", "group"}},
	{name: "in a pipeline", in: real + " | tee log\n", wantErr: []string{"line 1", "pipeline"}},
	{name: "in a loop", in: "while false; do\n" + real + "\ndone\n", wantErr: []string{"line 2", "loop"}},
	{name: "in a command substitution", in: "echo \"$(" + real + ")\"\n", wantErr: []string{"line 1", "not a plain top-level command"}},
	{name: "in an unquoted here-doc's substitution", in: "cat <<EOF\n$(" + real + ")\nEOF\n", wantErr: []string{"line 2", "not a plain top-level command"}},
	{name: "in the background", in: real + " &\n", wantErr: []string{"line 1", "background"}},
	{name: "negated", in: "! " + real + "\n", wantErr: []string{"line 1", "negated"}},
	{name: "exit before it", in: "exit 0\n" + real + "\n", wantErr: []string{"line 2", "never runs", "exit on line 1"}},
	{name: "exec of another command before it", in: "exec true\n" + real + "\n", wantErr: []string{"line 2", "never runs", "line 1"}},
	{name: "a second after exec", in: "exec " + real + "\n" + ga + "\n", wantErr: []string{"line 2", "never runs", "line 1"}},
	{name: "a second after exit", in: real + "\nexit 0\n" + ga + "\n", wantErr: []string{"line 3", "never runs", "exit on line 2"}},
	{name: "conditional exit before it", in: "[ -n \"$SKIP\" ] && exit 0\n" + real + "\n", wantErr: []string{"line 2", "may never run", "line 1"}},
	{name: "exit in an if before it", in: "if [ -f stop ]; then\n  exit 1\nfi\n" + real + "\n", wantErr: []string{"line 4", "may never run", "line 2 first (exit inside an if)"}},
	{name: "set -e and false before it", in: "set -e\nfalse\n" + real + "\n", wantErr: []string{"line 3", "may never run", "line 2", "set -e"}},
	{name: "set -o errexit and cd before it", in: "set -o errexit\ncd /nowhere\n" + real + "\n", wantErr: []string{"line 3", "may never run", "line 2"}},
	{name: "shebang -e and a test before it", in: "#!/bin/bash -ex\n[ -f x ]\n" + real + "\n", wantErr: []string{"line 3", "may never run", "line 2"}},
	{name: "set -e and a failing assignment", in: "set -e\nX=$(false)\n" + real + "\n", wantErr: []string{"line 3", "may never run", "line 2"}},
	{name: "set -u and a variable before it", in: "set -u\necho \"$UNSET\"\n" + real + "\n", wantErr: []string{"line 3", "may never run", "line 2", "set -u"}},
	{name: "error-if-unset expansion before it", in: "echo \"${X:?not set}\"\n" + real + "\n", wantErr: []string{"line 2", "may never run", "line 1"}},
	{name: "eval of an exit before it", in: "eval '[ -f stop ] && exit 0'\n" + real + "\n", wantErr: []string{"line 2", "may never run", "line 1 first (eval runs an exit)"}},
	{name: "set -n before it", in: "set -n\n" + real + "\n", wantErr: []string{"line 2", "may never run", "line 1"}},
	{name: "an ERR trap that exits", in: "trap 'exit 1' ERR\n" + real + "\n", wantErr: []string{"line 2", "may never run", "line 1"}},
	{name: "variable argument", in: script + " to \"$X86\" " + nightlyArm + "\n", wantErr: []string{"line 1", "argument 1 (\"$X86\") is not a literal word"}},
	{name: "command substitution argument", in: script + " to \"$(cat x)\" b\n", wantErr: []string{"line 1", "argument 1", "not a literal word"}},
	{name: "glob argument", in: script + " to quay.io/x:4.18.* b\n", wantErr: []string{"line 1", "argument 1", "pathname"}},
	{name: "brace argument", in: script + " to quay.io/x:{a,b} c\n", wantErr: []string{"line 1", "argument 1", "brace"}},
	{name: "tilde argument", in: script + " to ~/x b\n", wantErr: []string{"line 1", "argument 1", "tilde"}},
	{name: "ansi-c quoted argument", in: script + " to $'a\\x41' b\n", wantErr: []string{"line 1", "argument 1", "not a literal word"}},
	{name: "variable sub-command", in: script + " $SUB a b\n", wantErr: []string{"line 1", "sub-command"}},
	{name: "command name is a variable", in: "$REBASE to a b\n", wantErr: []string{"line 1", "command name", "$REBASE"}},
	{name: "command name ends in a variable", in: "./scripts/auto-rebase/$S to a b\n", wantErr: []string{"line 1", "command name"}},
	{name: "lvms script is not it", in: "./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\"\n", wantErr: []string{"line 1", "rebase_lvms.sh`"}},
	{name: "unknown command", in: real + "\nmake verify\n", wantErr: []string{"line 2", "`make`"}},
	{name: "another script", in: "./hack/prepare.sh\n" + real + "\n", wantErr: []string{"line 1", "`./hack/prepare.sh`"}},
	{name: "overwrites the script", in: "echo 'exit 0' > " + script + "\n" + real + "\n", wantErr: []string{"line 1", "writes"}},
	{name: "bash -n does not run it", in: "bash -n " + real + "\n", wantErr: []string{"line 1", "option -n"}},
	{name: "bash --rcfile", in: "bash --rcfile x " + real + "\n", wantErr: []string{"line 1", "option --rcfile"}},
	{name: "exec -a", in: "exec -a x " + real + "\n", wantErr: []string{"line 1", "`exec -a`"}},
	{name: "CRLF line ends", in: "#!/bin/bash -x\r\n" + real + "\r\n", wantErr: []string{"line 1", "carriage return"}},
	{name: "byte-order mark", in: "\uFEFF" + shebang + real + "\n", wantErr: []string{"line 1", "byte-order mark"}},
	{name: "BASH_ENV for the invocation", in: "BASH_ENV=./x.sh " + real + "\n", wantErr: []string{"line 1", "sets BASH_ENV"}},
	{name: "exported PS4", in: "export PS4='$(exit 1)'\n" + real + "\n", wantErr: []string{"line 1", "sets PS4"}},
	{name: "sleep forever before it", in: "sleep infinity\n" + real + "\n", wantErr: []string{"line 1", "`sleep`"}},
	{name: "hash remaps the script", in: "hash -p /bin/true rebase.sh\nrebase.sh to a b\n", wantErr: []string{"line 1", "`hash` runs rebase.sh"}},
	{name: "NUL byte", in: shebang + "\x00\n" + real + "\n", wantErr: []string{"line 2", "NUL"}},
	{name: "Latin-1 in the pull spec", in: script + " to caf\xe9:1 b\n", wantErr: []string{"line 1", "0xe9", "UTF-8"}},
	{name: "control character in an argument", in: script + " to \"a\tb\" c\n", wantErr: []string{"line 1", "argument 1", "control character"}},
	{name: "not bash", in: "#!/bin/bash\n" + script + " to \"" + nightlyX86 + "\n", wantErr: []string{"line 2", "not a bash script"}},
	{name: "too big", in: shebang + strings.Repeat("# padding\n", MaxSize/10+1) + real + "\n", wantErr: []string{"at most"}},
	{name: "a million nested subshells", in: strings.Repeat("(", 1_000_000) + real + strings.Repeat(")", 1_000_000) + "\n", wantErr: []string{"at most"}},
	{name: "nested subshells under the cap", in: strings.Repeat("( ", 3000) + "true" + strings.Repeat(" )", 3000) + "\n" + real + "\n", wantErr: []string{"line 1", "nested"}},
	{name: "eval nested too deep", in: "eval \"eval \\\"eval \\\\\\\"eval \\\\\\\\\\\\\\\"eval echo\\\\\\\\\\\\\\\"\\\\\\\"\\\"\"\n" + real + "\n", wantErr: []string{"line 1", "nested"}},
}

func TestFind(t *testing.T) {
	for _, set := range [][]findCase{evaluated, refused} {
		for _, tc := range set {
			t.Run(tc.name, func(t *testing.T) { checkFind(t, tc) })
		}
	}
}

func checkFind(t *testing.T, tc findCase) {
	t.Helper()
	got, err := Find("scripts/auto-rebase/last_rebase.sh", []byte(tc.in), payloads)
	if len(tc.wantErr) > 0 {
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "scripts/auto-rebase/last_rebase.sh") {
			t.Fatalf("error %v (found %+v), want an *Error naming the file", err, got)
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

// TestRewrite: a record is rewritten at its arguments only, every other byte kept; an
// argument bash would read otherwise is refused, and so is a rewrite that does not read back
// as the arguments given.
func TestRewrite(t *testing.T) {
	const file = "last_rebase_lvms.sh"
	lvms := Spec{Scripts: []string{"rebase_lvms.sh"}, Sub: "to"}
	in := "#!/bin/bash -x\n# caf\xe9\n./scripts/auto-rebase/rebase_lvms.sh \\\n  to 'a:v1' 2>/dev/null # trailing\n"
	call, err := Find(file, []byte(in), lvms)
	if err != nil || call == nil {
		t.Fatal(call, err)
	}
	got, err := call.Rewrite(file, []byte(in), lvms, "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4")
	want := "#!/bin/bash -x\n# caf\xe9\n./scripts/auto-rebase/rebase_lvms.sh \\\n  to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\" 2>/dev/null # trailing\n"
	if err != nil || string(got) != want {
		t.Fatalf("Rewrite = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"a:$(reboot)", "a b", "", "a\"b"} {
		if _, err := call.Rewrite(file, []byte(in), lvms, bad); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("Rewrite(%q): %v, want an error naming the file", bad, err)
		}
	}
	off := *call
	off.subEnd -= 3 // a splice in the wrong place must not be written
	if out, err := off.Rewrite(file, []byte(in), lvms, "a:v2"); err == nil {
		t.Errorf("a misplaced rewrite was accepted: %q", out)
	}
}

package attack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandBases are the commands whose list flags the empty rows attack, each with a command
// line that is otherwise valid (and harmless when the guard is missing: a no-op write on a
// rebased tree, a read of a clone), its mode and its template.
var commandBases = []struct {
	name string
	mode mode
	tpl  string
	args func(w *world) []string
}{
	{"rebase", modeWrite, tplRebased, func(w *world) []string { return w.rebase() }},
	{"outdated", modeRead, tplClone, func(w *world) []string {
		// No --branches here: a second --branches "" would add nothing to it (see notes).
		return w.command("outdated", "--microshift-dir", w.tree, "-o", "json")
	}},
	{"resolve", modeRead, "", func(w *world) []string { return w.command("resolve", "--ocp", "4.18") }},
	{"apply", modeApply, "", applyOffline},
	{"lvmd check", modeRead, "", func(w *world) []string { return []string{"lvmd", "check", lvmdFile(w)} }},
	{"version", modeRead, "", func(*world) []string { return []string{"version"} }},
}

// listFlag matches a flag of a list type in cobra's --help.
var listFlag = regexp.MustCompile(`^\s+(?:-[a-zA-Z], )?(--[a-z0-9-]+) (strings|stringArray|stringSlice)\s`)

// listFlags reads the list-taking flags of a command from the binary's own --help, so a list
// flag added later gets its empty rows without anyone writing them.
func listFlags(t *testing.T, command string) []string {
	t.Helper()
	args := append(strings.Fields(command), "--help")
	if command == "rebase" {
		args = []string{"--help"}
	}
	res := runProc(proc{args: args, env: childEnv(t.TempDir())})
	if res.code != exitOK {
		t.Fatalf("%s --help: exit %d\n%s", command, res.code, res.stderr)
	}
	var flags []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if m := listFlag.FindStringSubmatch(line); m != nil {
			flags = append(flags, m[1])
		}
	}
	return flags
}

// TestEmptyIsNeverNone is invariant 6 (principle 2): every list-taking flag of every command,
// given an empty or blank list, is a usage error naming the flag, before any work. The
// flags come from each command's --help; the one list taken from the environment, KUBECONFIG,
// has its rows with apply.
func TestEmptyIsNeverNone(t *testing.T) {
	skipShort(t)
	var rows []row
	total := 0
	for _, c := range commandBases {
		flags := listFlags(t, c.name)
		total += len(flags)
		for _, flag := range flags {
			for _, v := range []struct{ name, value string }{{"empty", ""}, {"blank", " "}, {"comma", ","}, {"blank items", " , "}} {
				rows = append(rows, row{
					name: c.name + "/" + flag + "=" + v.name, class: empty, mode: c.mode, tpl: c.tpl,
					args: func(w *world) []string { return append(c.args(w), flag+"="+v.value) },
					want: exitUsage, names: []string{flag},
				})
			}
		}
	}
	if total < 8 {
		t.Fatalf("only %d list flags found in the commands' --help: the pattern no longer reads it", total)
	}
	runRows(t, rows)
}

// lvmdFile is a valid lvmd.yaml in the row's inputs.
func lvmdFile(w *world) string {
	p := filepath.Join(w.in, "lvmd.yaml")
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n  spare-gb: 0\n"), 0o644); err != nil {
			panic(err)
		}
	}
	return p
}

// applyOffline is an apply that would reach no cluster: a kubeconfig naming a closed port.
func applyOffline(w *world) []string {
	kc := filepath.Join(w.in, "kubeconfig")
	if _, err := os.Stat(kc); err != nil {
		if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
			"contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"), 0o600); err != nil {
			panic(err)
		}
	}
	return []string{"apply", "--kubeconfig", kc, "--assets", filepath.Join(testdata, "golden", "4.18", "assets"),
		"--lvmd", lvmdFile(w), "--runtime-lvmd", filepath.Join(w.out, "runtime-lvmd.yaml"), "--timeout", "3s"}
}

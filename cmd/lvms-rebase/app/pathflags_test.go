package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFilePathExitCodes holds every path a flag or argument names, in every command, to the
// one exit-code rule (README "Exit codes", pathKind): whatever the path names — absent, a
// directory for a file or the reverse, a FIFO, a device, a link to one, empty, over the cap,
// unreadable — the command exits 1 (never 2, never 0) with an error naming the path, before
// any network or cluster work. It walks the commands and flags as --help lists them, so a new
// path flag is covered without a new row; a flag whose name reads like a path must be declared
// in pathFlags (or below, as not one).
func TestFilePathExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(dir, "run"))
	t.Setenv("DOCKER_CONFIG", filepath.Join(dir, "docker"))
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("KUBECONFIG", "")
	classes := pathClasses(t, dir)
	base := commandBases(t, dir)
	covered := 0
	walkCommands(NewRootCommand(IOStreams{}), func(c *cobra.Command) {
		path := c.CommandPath()
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			kind, ok := pathFlags[fl.Name]
			if !ok {
				if looksLikePath.MatchString(fl.Name) && !notPaths[fl.Name] {
					t.Errorf("%s --%s reads like a path: declare it in pathFlags (or in notPaths, saying why)", path, fl.Name)
				}
				return
			}
			args, ok := base[path]
			if !ok {
				t.Errorf("%s --%s: no base arguments: add the command to commandBases", path, fl.Name)
				return
			}
			for _, cl := range classes {
				if !cl.applies(fl.Name, kind) {
					continue
				}
				covered++
				t.Run(path+"/--"+fl.Name+"/"+cl.name, func(t *testing.T) {
					checkPathExit(t, append(append([]string(nil), args...), "--"+fl.Name, cl.path), cl.path)
				})
			}
		})
		if w := strings.Fields(c.Use); len(w) > 1 && (w[1] == "FILE" || w[1] == "DIR") {
			args := base[path]
			for _, cl := range classes {
				if cl.applies("", fileIn) {
					covered++
					t.Run(path+"/FILE/"+cl.name, func(t *testing.T) {
						checkPathExit(t, append(append([]string(nil), args...), cl.path), cl.path)
					})
				}
			}
		}
	})
	if covered == 0 {
		t.Fatal("no path flag found: the walk is broken")
	}
}

// looksLikePath matches flag names that suggest a path; notPaths are the ones that are not.
var looksLikePath = regexp.MustCompile(`(^|-)(dir|file|path|config|assets|body|policy|lvmd|kubeconfig|authfile|cache)($|-)`)

var notPaths = map[string]bool{
	"max-file-size": true, // a size
}

// checkPathExit runs args and wants exit 1 with an error naming path.
func checkPathExit(t *testing.T, args []string, path string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != ExitError || !strings.Contains(errOut.String(), path) {
		t.Errorf("lvms-rebase %q: exit %d, want %d with an error naming %s\nstderr:\n%s", args, code, ExitError, path, errOut.String())
	}
}

// pathClass is one kind of thing a path can name.
type pathClass struct {
	name    string
	path    string
	applies func(flag string, k pathKind) bool
}

func pathClasses(t *testing.T, dir string) []pathClass {
	t.Helper()
	p := func(name string) string { return filepath.Join(dir, "in", name) }
	if err := os.MkdirAll(p("adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.WriteFile(p("empty"), nil, 0o644))
	mustDo(t, os.WriteFile(p("unreadable"), []byte("{}"), 0o000))
	mustDo(t, syscall.Mkfifo(p("fifo"), 0o644))
	mustDo(t, os.Symlink("/dev/zero", p("zero-link")))
	f, err := os.Create(p("huge"))
	mustDo(t, err)
	mustDo(t, f.Truncate(16<<20+1)) // sparse: one byte over the read cap
	mustDo(t, f.Close())
	reads := func(k pathKind) bool { return k == fileIn || k == fileInOptional || k == dirIn || k == sourceIn }
	files := func(k pathKind) bool { return k == fileIn || k == fileInOptional || k == sourceIn }
	root := os.Geteuid() == 0
	return []pathClass{
		// Absent: a file whose absence has a meaning of its own (--lvmd) is not an error.
		{"absent", p("absent"), func(_ string, k pathKind) bool { return reads(k) && k != fileInOptional }},
		{"directory", p("adir"), func(_ string, k pathKind) bool { return files(k) && k != sourceIn }},
		{"regular file for a directory", p("empty"), func(_ string, k pathKind) bool { return k == dirIn }},
		{"FIFO", p("fifo"), func(_ string, k pathKind) bool { return reads(k) }},
		{"device", "/dev/null", func(_ string, k pathKind) bool { return reads(k) }},
		{"link to a device", p("zero-link"), func(_ string, k pathKind) bool { return reads(k) }},
		// An empty config.yaml is MicroShift's defaults; an empty lvmd.yaml is the applier's
		// to judge (after the assets).
		{"empty", p("empty"), func(flag string, k pathKind) bool {
			return (k == fileIn || k == sourceIn) && flag != "config"
		}},
		{"over the cap", p("huge"), func(_ string, k pathKind) bool { return k == fileIn || k == fileInOptional }},
		// root reads a file whatever its mode: the class exists only for other users.
		{"unreadable", p("unreadable"), func(_ string, k pathKind) bool { return !root && (k == fileIn || k == fileInOptional) }},
	}
}

// commandBases are, per command, the arguments that make it reach its path flags' files and
// fail without them (exit 1, naming something else), before any network or cluster work.
func commandBases(t *testing.T, dir string) map[string][]string {
	t.Helper()
	tree := filepath.Join(dir, "tree")
	assets := filepath.Join(dir, "assets")
	mustDo(t, os.MkdirAll(tree, 0o755))
	mustDo(t, os.MkdirAll(assets, 0o755))
	kc := filepath.Join(dir, "kubeconfig")
	mustDo(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))
	cache := filepath.Join(dir, "cache")
	return map[string][]string{
		"lvms-rebase":            {"--ocp", "4.18", "--offline", "--dry-run", "--microshift-dir", tree, "--cache-dir", cache},
		"lvms-rebase resolve":    {"resolve", "--ocp", "4.18", "--offline", "--cache-dir", cache},
		"lvms-rebase outdated":   {"outdated", "--offline", "--microshift-dir", tree, "--cache-dir", cache},
		"lvms-rebase apply":      {"apply", "--assets", assets, "--kubeconfig", kc, "--lvmd", filepath.Join(dir, "no-lvmd"), "--timeout", "1m"},
		"lvms-rebase lvmd check": {"lvmd", "check"},
	}
}

// walkCommands calls f for c and every command under it, as --help lists them (cobra's help
// and completion commands take no paths).
func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

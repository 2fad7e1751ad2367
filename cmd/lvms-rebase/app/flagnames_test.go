package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// cliFlags is every long flag name of every lvms-rebase command.
func cliFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { flags[f.Name] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(IOStreams{}))
	return flags
}

// TestFlagNamesCoverEveryOption proves the one table spells every option libraries name, as a
// flag that exists, so no library message reaches a user with a Go field name in it.
func TestFlagNamesCoverEveryOption(t *testing.T) {
	flags := cliFlags(t)
	names := append([]option.Name{}, option.All...)
	for _, a := range []string{"x86_64", "aarch64"} {
		names = append(names, option.For(option.OCPRelease, a))
	}
	for _, n := range names {
		got := n.String()
		if !strings.HasPrefix(got, "--") || !flags[strings.TrimPrefix(got, "--")] {
			t.Errorf("option %s is spelled %q: not a flag of lvms-rebase", string(n), got)
		}
	}
	if got, want := option.For(option.OCPRelease, "<arch>").String(), "--ocp-release-<arch>"; got != want {
		t.Errorf("per-arch placeholder: got %q, want %q", got, want)
	}
}

// otherPrograms are flags of the programs libraries run or whose formats they write (git, lvs,
// unified diff headers): they are arguments, not words of this CLI.
var otherPrograms = map[string]bool{
	"readonly": true, "noheadings": true, "options": true, "separator": true, // lvs
	"cached": true, "name-only": true, "is-inside-work-tree": true, // git
	"verify": true, "long": true, "full-tree": true, "format": true, "git-dir": true, "detach": true, "porcelain": true, // git (gittree, fleet)
	"is-ancestor": true, "create-reflog": true, "git-common-dir": true, "show-prefix": true, "untracked-files": true, // git (fleet, commit)
	"no-renames": true, "show-object-format": true, "empty": true, "no-filters": true, "stdin-paths": true, "index-info": true, // git (commit)
	"no-commit-id": true, "root": true, "git-path": true, "include-untracked": true, "soft": true, // git (commit, and the advice it gives)
	"git": true, // "diff --git a/x b/x" header
}

// persisted are literals that are recorded file content naming this CLI's flags, keyed by
// file: the lock file's bytes (golden, and compared by --check) must not depend on which front
// end wrote them, so they do not go through option's Namer.
var persisted = map[string][]string{
	"rebase/lock/lock.go": {"`lvms-rebase --check` verifies"}, // the lock file's comment header
}

var dashFlag = regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]+)`)

// TestLibrariesSpeakInOptions fails on a "--flag" string literal in library code (both
// modules, non-test files outside cmd/, hack/ and test-support directories): libraries name an
// option (rebase/option) and flagnames.go spells it. Test-support packages (fixtures) may hold
// other programs' arguments but never one of this CLI's flags.
func TestLibrariesSpeakInOptions(t *testing.T) {
	flags := cliFlags(t)
	root := filepath.Join("..", "..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, hit := range flagLiterals(t, path) {
			if allowedLiteral(rel, hit, flags) {
				continue
			}
			t.Errorf("%s: string literal names a flag (%q): name the option (rebase/option) and spell it in cmd/lvms-rebase/app/flagnames.go", rel, hit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func skipDir(rel, name string) bool {
	if rel == "." {
		return false
	}
	return rel == "cmd" || rel == "hack" || strings.HasPrefix(name, ".") || name == "testdata" ||
		name == "vendor" || strings.Contains(name, "test")
}

// isFixtures marks test support that models other programs' manifests (container args).
func isFixtures(rel string) bool { return strings.HasPrefix(rel, "internal/testing/fixtures/") }

func allowedLiteral(rel, lit string, flags map[string]bool) bool {
	for _, want := range persisted[rel] {
		if strings.Contains(lit, want) {
			return true
		}
	}
	for _, m := range dashFlag.FindAllStringSubmatch(lit, -1) {
		name := m[1]
		if flags[name] || strings.HasPrefix(name, "ocp-release-") {
			return false
		}
		if !otherPrograms[name] && !isFixtures(rel) {
			return false
		}
	}
	return true
}

// flagLiterals returns the string literals in file that contain "--name".
func flagLiterals(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if dashFlag.MatchString(s) {
			hits = append(hits, s)
		}
		return true
	})
	return hits
}

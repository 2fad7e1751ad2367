package app

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVerbosityFlag: -v/--v is the log verbosity (klog-like levels), not --version.
func TestVerbosityFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-v", "4", "version"}, ExitOK, "lvms-rebase dev"},
		{[]string{"--v=2", "--version"}, ExitOK, "lvms-rebase dev"},
		{[]string{"version", "--v", "6"}, ExitOK, "lvms-rebase dev"},
		{[]string{"--version"}, ExitOK, "lvms-rebase dev"},
		{[]string{"-v"}, ExitUsage, "flag needs an argument"},
		{[]string{"-v", "high", "version"}, ExitUsage, "invalid argument"},
		{[]string{"--ocp", "4.18", "-v", "-1"}, ExitUsage, "-v/--v: expected a verbosity of 0 or more"},
		{[]string{"apply", "--assets", ".", "--log-format", "xml"}, ExitUsage, "--log-format: expected plain, text or json"},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("lvms-rebase %v: exit %d (want %d), output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
	for _, tc := range []struct {
		v            int
		debug, info  bool
		debugAtLevel slog.Level
	}{
		{0, false, true, slog.LevelDebug},
		{2, false, true, slog.LevelDebug},
		{4, true, true, slog.LevelDebug},
		{6, true, true, slog.Level(-6)},
	} {
		var buf bytes.Buffer
		l, err := (&logFlags{verbosity: tc.v, format: "json"}).logger(&buf)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if l.Enabled(ctx, tc.debugAtLevel) != tc.debug || l.Enabled(ctx, slog.LevelInfo) != tc.info {
			t.Errorf("-v %d: V(%d) enabled %v, info enabled %v", tc.v, -tc.debugAtLevel, l.Enabled(ctx, tc.debugAtLevel), l.Enabled(ctx, slog.LevelInfo))
		}
	}
}

// TestCommandsListedExplicitly: the root lists its commands; nothing registers itself.
func TestCommandsListedExplicitly(t *testing.T) {
	var names []string
	for _, c := range NewRootCommand(IOStreams{}).Commands() {
		names = append(names, c.Name())
	}
	if want := []string{"apply", "lvmd", "outdated", "resolve", "version"}; !slices.Equal(names, want) {
		t.Errorf("commands %v, want %v", names, want)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				t.Errorf("%s: func init registers something behind the root command's back", fset.Position(fd.Pos()))
			}
		}
	}
}

// TestErrorPrintedOnce: a failing run reports its error on one line, not once in the phase
// log and again from Main (or from cobra).
func TestErrorPrintedOnce(t *testing.T) {
	dir := copyTree(t, "../../../testdata/microshift")
	for _, args := range [][]string{
		{"--ocp", "4.18", "--microshift-dir", dir, "--offline", "--cache-dir", t.TempDir(), "--dry-run"},
		{"--ocp", "4.18", "--microshift-dir", dir, "--offline", "--cache-dir", t.TempDir(), "--dry-run", "--log-format", "json"},
		{"--no-such-flag"},
		{"--no-such-flag", "--log-format", "json"}, // cobra stops before it parses --log-format
		{"--no-such-flag", "--log-format=json"},
		{"resolve", "--no-such-flag", "--log-format", "json"},
		{"no-such-command"},
		{"resolve"},
	} {
		code, _, errOut := runMain(t, args...)
		if code == ExitOK {
			t.Fatalf("%v: exit 0", args)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		last := lines[len(lines)-1]
		msg, ok := strings.CutPrefix(last, "Error: ")
		var rec struct{ Level, Msg string }
		if !ok && json.Unmarshal([]byte(last), &rec) == nil && rec.Level == "ERROR" {
			msg, ok = rec.Msg, true // --log-format json: the error is a JSON record too
		}
		if asked := strings.Contains(strings.Join(args, " "), "--log-format json") || slices.Contains(args, "--log-format=json"); asked && rec.Level != "ERROR" {
			t.Errorf("%v: with --log-format json the error is no JSON record:\n%s", args, errOut)
		}
		if !ok {
			t.Fatalf("%v: the last stderr line is not the error:\n%s", args, errOut)
		}
		if n := strings.Count(errOut, msg); n != 1 {
			t.Errorf("%v: the error %q is printed %d times:\n%s", args, msg, n, errOut)
		}
	}
}

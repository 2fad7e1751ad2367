package safefile

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unboundedReads are the calls that read a file (or hand out a reader of one) without this
// package's policy. Every use in the module's shipped code goes through safefile instead, or
// carries a comment saying why it need not: "safefile: <reason>" in a comment on its line or
// ending on the line above (a file this run wrote itself, an embedded file system, a reader
// already bounded).
var unboundedReads = map[string]bool{
	"os.ReadFile": true, "os.Open": true, "os.OpenFile": true, "os.DirFS": true,
	"fs.ReadFile": true, "io.ReadAll": true, "ioutil.ReadFile": true,
}

// TestEveryReadIsBounded holds the inventory of file reads to the policy: a new os.ReadFile
// of a tree's file fails here until it is routed through safefile or justified.
func TestEveryReadIsBounded(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Another module (applier, hack/tools), the developer tools, test support and
			// this package itself are outside the shipped binary's reads.
			switch rel {
			case "applier", "hack", "internal/testing", "internal/safefile", ".git", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		found = append(found, unjustified(t, fset, p, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: read without the safefile policy and no \"safefile:\" comment saying why", f)
	}
}

// unjustified lists the unbounded reads of one file that carry no justification.
func unjustified(t *testing.T, fset *token.FileSet, path, rel string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	justified := map[int]bool{}
	// A comment group saying "safefile:" justifies the line it ends on and the next one.
	for _, cg := range f.Comments {
		if strings.Contains(cg.Text(), "safefile:") {
			justified[fset.Position(cg.End()).Line] = true
		}
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || !unboundedReads[id.Name+"."+sel.Sel.Name] {
			return true
		}
		line := fset.Position(sel.Pos()).Line
		if !justified[line] && !justified[line-1] {
			out = append(out, fmt.Sprintf("%s:%d: %s.%s", rel, line, id.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}

// moduleRoot finds the root module's directory from the package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/lvms-rebase/lvms-rebase\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("root module not found")
		}
		dir = parent
	}
}

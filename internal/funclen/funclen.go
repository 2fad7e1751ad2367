// Package funclen enforces the style rule that no product function grows past a line limit:
// it parses a module's non-test Go files and reports every function declaration longer than
// the limit. `make verify` runs it through hack/verify-funclen.sh and its own test runs it on
// the root module, so `make test` catches a long function too.
package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Limit is the style rule's ceiling for product functions, in lines.
const Limit = 80

// RootExcluded are the directories of the root module the rule does not apply to: hack
// tools, the fixture generator, and the applier, which is its own module and is checked by
// naming it as the root (`hack/verify-funclen.sh applier`) once its functions are split.
var RootExcluded = []string{"applier", "hack", "internal/testing/fixtures"}

// Options say what to check.
type Options struct {
	// Max is the longest a function may be, in lines from `func` to its closing brace.
	Max int
	// Exclude are slash-separated directories, relative to the root, that are not checked
	// (with everything under them): generators, hack tools, separate modules.
	Exclude []string
}

// Finding is one function over the limit.
type Finding struct {
	File  string // slash-separated, relative to the root
	Line  int
	Func  string // "Name" or "(Recv).Name"
	Lines int
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines", f.File, f.Line, f.Func, f.Lines)
}

// Check walks root and returns the functions in non-test .go files longer than o.Max, in
// file and line order. Directories named testdata, hidden ones and those starting with "_"
// are skipped, as the go tool does; so is every directory holding its own go.mod other than
// root (a nested module is checked by naming it as the root).
func Check(root string, o Options) ([]Finding, error) {
	var out []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(root, path, rel, d.Name(), o.Exclude) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		found, err := checkFile(path, rel, o.Max)
		out = append(out, found...)
		return err
	})
	return out, err
}

func skipDir(root, path, rel, name string, exclude []string) bool {
	if rel == "." {
		return false
	}
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	if slices.Contains(exclude, rel) {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil && path != root
}

func checkFile(path, rel string, limit int) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", rel, err)
	}
	var out []Finding
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
		if n := end - start + 1; n > limit {
			out = append(out, Finding{File: rel, Line: start, Func: funcName(fn), Lines: n})
		}
	}
	return out, nil
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if ix, ok := t.(*ast.IndexListExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// Command filegraph checks that the files of Go packages read top-down: it type-checks each
// package given (an import path or ./dir), links every file to the files of the same package
// whose package-level names (functions, types, methods, fields, variables, constants) it uses,
// and prints each cycle of such uses — a file that uses a file that, directly or through
// others, uses it back. It exits 1 when there is a cycle, so that a package's helpers are
// always defined below their users, in a lower file or package.
//
//	go run ./hack/filegraph ./rebase          # the check
//	go run ./hack/filegraph -v ./rebase       # also every use between two files, with the names
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "print every use between two files, with the names used")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: filegraph [-v] PACKAGE...")
		os.Exit(2)
	}
	cycles, err := run(os.Stdout, flag.Args(), *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filegraph:", err)
		os.Exit(2)
	}
	if cycles > 0 {
		os.Exit(1)
	}
}

// listed is what `go list -export -json` says of a package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// list runs go list over args (with -deps, for the export data of every import).
func list(args ...string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-export", "-json=ImportPath,Dir,GoFiles,Export"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(&out)
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

// run checks each package of args and returns the number of cycles found.
func run(w io.Writer, args []string, verbose bool) (int, error) {
	deps, err := list(append([]string{"-deps"}, args...)...)
	if err != nil {
		return 0, err
	}
	export := map[string]string{}
	for _, p := range deps {
		export[p.ImportPath] = p.Export
	}
	targets, err := list(args...)
	if err != nil {
		return 0, err
	}
	cycles := 0
	for _, p := range targets {
		edges, err := fileUses(p, export)
		if err != nil {
			return cycles, err
		}
		if verbose {
			printEdges(w, p, edges)
		}
		for _, c := range findCycles(edges) {
			cycles++
			fmt.Fprintf(w, "%s: files use each other in a cycle: %s\n", p.ImportPath, strings.Join(c, " -> "))
			for i, f := range c[:len(c)-1] {
				fmt.Fprintf(w, "  %s uses %s: %s\n", f, c[i+1], strings.Join(edges[f][c[i+1]], ", "))
			}
		}
		if cycles == 0 {
			fmt.Fprintf(w, "%s: %d files, no cycle of uses between them\n", p.ImportPath, len(p.GoFiles))
		}
	}
	return cycles, nil
}

// fileUses type-checks p (without its tests) and returns, per file, the other files of p it
// uses and the names it uses from each.
func fileUses(p listed, export map[string]string) (map[string]map[string][]string, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if export[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(export[path])
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
	if err != nil {
		return nil, err
	}
	edges := map[string]map[string][]string{}
	link := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		from, to := filepath.Base(fset.Position(at).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to || !packageLevel(obj, pkg) {
			return
		}
		if edges[from] == nil {
			edges[from] = map[string][]string{}
		}
		if !slices.Contains(edges[from][to], obj.Name()) {
			edges[from][to] = append(edges[from][to], obj.Name())
		}
	}
	for id, obj := range info.Uses {
		link(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		link(sel.Sel.Pos(), s.Obj())
	}
	return edges, nil
}

// packageLevel tells whether obj is declared at package level: in the package's scope, or a
// method or field (whose home is the file declaring it).
func packageLevel(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	default:
		return obj.Parent() == pkg.Scope()
	}
}

// findCycles returns one cycle (a path back to its first file) per strongly connected
// component of more than one file, in a stable order.
func findCycles(edges map[string]map[string][]string) [][]string {
	var nodes []string
	for f, to := range edges {
		nodes = append(nodes, f)
		for t := range to {
			nodes = append(nodes, t)
		}
	}
	sort.Strings(nodes)
	nodes = slices.Compact(nodes)
	var cycles [][]string
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n] {
			continue
		}
		if path := pathBack(edges, n); path != nil {
			for _, f := range path {
				seen[f] = true
			}
			cycles = append(cycles, path)
		}
	}
	return cycles
}

// pathBack is the shortest path of uses from start back to start, or nil.
func pathBack(edges map[string]map[string][]string, start string) []string {
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, t := range slices.Sorted(maps.Keys(edges[f])) {
			if t == start {
				path := []string{start}
				for x := f; x != start; x = prev[x] {
					path = append([]string{x}, path...)
				}
				return append([]string{start}, path...)
			}
			if _, ok := prev[t]; !ok {
				prev[t] = f
				queue = append(queue, t)
			}
		}
	}
	return nil
}

// printEdges prints every use between two files of p.
func printEdges(w io.Writer, p listed, edges map[string]map[string][]string) {
	for _, f := range slices.Sorted(maps.Keys(edges)) {
		for _, t := range slices.Sorted(maps.Keys(edges[f])) {
			fmt.Fprintf(w, "%s: %s uses %s: %s\n", p.ImportPath, f, t, strings.Join(edges[f][t], ", "))
		}
	}
}

package v1alpha1

import (
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated reference in docs/output.md")

const (
	outputDoc = "../../docs/output.md"
	docBegin  = "<!-- BEGIN generated from the doc comments of api/v1alpha1 (go test ./api/v1alpha1 -run TestOutputDoc -update); do not edit -->\n"
	docEnd    = "<!-- END generated -->\n"
)

// kindTypes names the Go type of each kind: the kind's own name but where a constant of the
// package already has it.
var kindTypes = map[string]string{KindVersion: "VersionInfo"}

// TestOutputDoc: docs/output.md's field reference is generated from this package's doc
// comments, so it names every field of every document and none that is gone; every exported
// type and field has a doc comment.
func TestOutputDoc(t *testing.T) {
	types := parseTypes(t)
	var b strings.Builder
	seen := map[string]bool{}
	queue := []string{"TypeMeta"}
	for _, k := range Kinds() {
		queue = append(queue, cmpOr(kindTypes[k], k))
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		ty, ok := types[name]
		if !ok {
			t.Fatalf("no type %s in api/v1alpha1", name)
		}
		queue = append(queue, writeType(t, &b, ty)...)
	}
	for name := range types {
		if _, isStruct := types[name].Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); isStruct && !seen[name] {
			t.Errorf("type %s is in no document (docs/output.md would not list it)", name)
		}
	}
	checkDoc(t, b.String())
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func parseTypes(t *testing.T) map[string]*doc.Type {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var syntax []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		syntax = append(syntax, file)
	}
	pkg, err := doc.NewFromFiles(fset, syntax, "github.com/lvms-rebase/lvms-rebase/api/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]*doc.Type{}
	for _, ty := range pkg.Types {
		types[ty.Name] = ty
	}
	return types
}

// writeType writes one type's section and returns the types its fields name.
func writeType(t *testing.T, b *strings.Builder, ty *doc.Type) []string {
	if strings.TrimSpace(ty.Doc) == "" {
		t.Errorf("type %s has no doc comment", ty.Name)
	}
	fmt.Fprintf(b, "### %s\n\n%s\n", ty.Name, oneParagraph(ty.Doc))
	st, ok := ty.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
	if !ok || slices.ContainsFunc(ty.Methods, func(f *doc.Func) bool { return f.Name == "MarshalJSON" }) {
		b.WriteString("\n")
		return nil
	}
	b.WriteString("\n| Field | Type | Description |\n|---|---|---|\n")
	var named []string
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			s, _ := strconv.Unquote(f.Tag.Value)
			tag = reflect.StructTag(s).Get("json")
		}
		jsonName, opts, _ := strings.Cut(tag, ",")
		typ, refs := typeString(f.Type)
		named = append(named, refs...)
		if len(f.Names) == 0 { // embedded, inline
			fmt.Fprintf(b, "| (the fields of %s) | | |\n", typ)
			continue
		}
		if f.Doc.Text() == "" {
			t.Errorf("field %s.%s has no doc comment", ty.Name, f.Names[0].Name)
		}
		if jsonName == "" || jsonName == "-" {
			t.Errorf("field %s.%s has no JSON name", ty.Name, f.Names[0].Name)
		}
		desc := oneParagraph(f.Doc.Text())
		if opts == "omitempty" {
			typ, desc = strings.TrimSuffix(typ, " or null"), desc+" Left out when empty."
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", jsonName, typ, desc)
	}
	b.WriteString("\n")
	return named
}

// typeString writes a field's type for the reference, linking this package's types, and
// returns the types it names.
func typeString(e ast.Expr) (string, []string) {
	switch e := e.(type) {
	case *ast.StarExpr:
		s, refs := typeString(e.X)
		return s + " or null", refs
	case *ast.ArrayType:
		s, refs := typeString(e.Elt)
		return "list of " + s, refs
	case *ast.MapType:
		k, _ := typeString(e.Key)
		v, refs := typeString(e.Value)
		return "map of " + k + " to " + v, refs
	case *ast.Ident:
		if ast.IsExported(e.Name) {
			return fmt.Sprintf("[%s](#%s)", e.Name, strings.ToLower(e.Name)), []string{e.Name}
		}
		return e.Name, nil
	}
	return fmt.Sprintf("%T", e), nil
}

func oneParagraph(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// checkDoc compares the generated part of docs/output.md with ref, or rewrites it (-update).
func checkDoc(t *testing.T, ref string) {
	data, err := os.ReadFile(outputDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	begin, end := strings.Index(text, docBegin), strings.Index(text, docEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s: no generated part (%q … %q)", outputDoc, docBegin, docEnd)
	}
	got := text[begin+len(docBegin) : end]
	want := "\n" + ref
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(outputDoc, []byte(text[:begin+len(docBegin)]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's field reference is not what api/v1alpha1's doc comments say; run go test ./api/v1alpha1 -run TestOutputDoc -update", outputDoc)
}

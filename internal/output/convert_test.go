package output

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/applier"
	"github.com/lvms-rebase/lvms-rebase/internal/fleet"
	"github.com/lvms-rebase/lvms-rebase/internal/outdated"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json")

// notOutput are the library's exported fields that are not part of any document, with why.
// Every other exported field of a library result must reach the document: a field added to
// a result and not mapped (convert.go) fails TestEveryLibraryFieldReachesTheDocument.
var notOutput = map[reflect.Type][]string{
	reflect.TypeFor[source.Resolution](): {"Content"},         // parsed bundle and payloads for the run's steps
	reflect.TypeFor[applier.Result]():    {"Version", "Plan"}, // apply prints what it did, not its gates
}

// kind is one document kind and how a test makes it from a library value filled by fill.
type kind struct {
	name string
	from any // a pointer to the library value, nil when the command fills the document itself
	doc  func(from any) v1alpha1.Document
}

func kinds() []kind {
	return []kind{
		{v1alpha1.KindRebaseResult, &rebase.Result{}, func(v any) v1alpha1.Document { return RebaseResult(v.(*rebase.Result)) }},
		{v1alpha1.KindResolution, &source.Resolution{}, func(v any) v1alpha1.Document { return Resolution(v.(*source.Resolution)) }},
		{v1alpha1.KindApplyResult, &applier.Result{}, func(v any) v1alpha1.Document { return ApplyResult(v.(*applier.Result)) }},
		{v1alpha1.KindBranchStatusList, &outdated.Report{}, func(v any) v1alpha1.Document { return BranchStatusList(v.(*outdated.Report)) }},
		{v1alpha1.KindBranchRebaseList, &fleet.Report{}, func(v any) v1alpha1.Document { return BranchRebaseList(v.(*fleet.Report)) }},
		{v1alpha1.KindVersion, &version.Info{}, func(v any) v1alpha1.Document { return Version(*v.(*version.Info)) }},
		{v1alpha1.KindLvmdCheck, &v1alpha1.LvmdCheck{}, func(v any) v1alpha1.Document {
			d := v.(*v1alpha1.LvmdCheck)
			d.TypeMeta = v1alpha1.Meta(v1alpha1.KindLvmdCheck)
			return d
		}},
	}
}

// maxDepth bounds the structs nested in a filled value (a type holding itself).
const maxDepth = 10

// filled returns a new value like from with every exported field set (see fill).
func filled(from any) any {
	v := reflect.New(reflect.TypeOf(from).Elem())
	n := 0
	fill(v.Elem(), &n, 0)
	return v.Interface()
}

// fill sets every exported field of v, depth first in declaration order: strings "s<n>",
// numbers n, bools true, lists of one element, maps of one key, errors errors.New("s<n>").
// The values follow the declaration order, so the goldens do not change when a field of the
// library is renamed, and two fields never share a value (a mapping that swaps them shows).
func fill(v reflect.Value, n *int, depth int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n) * 1000)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n, depth)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n, depth)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n, depth)
		fill(e, n, depth)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if reflect.TypeFor[error]() == v.Type() {
			v.Set(reflect.ValueOf(fmt.Errorf("s%d", *n)))
		}
	case reflect.Struct:
		if depth > maxDepth {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !slices.Contains(notOutput[v.Type()], f.Name) {
				fill(v.Field(i), n, depth+1)
			}
		}
	}
}

func encode(t *testing.T, doc v1alpha1.Document) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, JSON, doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDocumentShapes holds each kind's JSON shape (field names, nesting, order, what is left
// out when empty) to testdata/<kind>.json, made from library values with every field set: a
// rename of a library field that changed the output, or of the API's, fails here.
func TestDocumentShapes(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			got := encode(t, k.doc(filled(k.from)))
			golden := filepath.Join("testdata", k.name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s's JSON changed (-%s +got); a field is renamed or removed only with a new API version (docs/output.md):\n%s", k.name, golden, diff)
			}
		})
	}
}

// TestEveryDocumentFieldIsFilled: with every library field set, every field of the document is
// set, so no field of the API is left unmapped.
func TestEveryDocumentFieldIsFilled(t *testing.T) {
	for _, k := range kinds() {
		doc := k.doc(filled(k.from))
		for _, path := range zeroFields(reflect.ValueOf(doc), k.name) {
			t.Errorf("%s is not filled from the library (internal/output/convert.go)", path)
		}
	}
}

// zeroFields lists the paths of the zero fields under v, but for the apiVersion and kind of a
// nested document (empty by design).
func zeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(v.Elem(), path)
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		return zeroFields(v.Index(0), path+"[0]")
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type == reflect.TypeFor[v1alpha1.TypeMeta]() && strings.Contains(path, ".") {
				continue
			}
			out = append(out, zeroFields(v.Field(i), path+"."+f.Name)...)
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// TestEveryLibraryFieldReachesTheDocument: zeroing any one exported field of a filled library
// value changes the document, so a field added to a library result (or renamed into a new
// one) is either mapped or listed in notOutput with why, never dropped silently.
func TestEveryLibraryFieldReachesTheDocument(t *testing.T) {
	for _, k := range kinds() {
		if _, ok := k.from.(v1alpha1.Document); ok {
			continue
		}
		full := encode(t, k.doc(filled(k.from)))
		for _, path := range fieldPaths(reflect.TypeOf(k.from).Elem(), nil, 0) {
			v := filled(k.from)
			zero(reflect.ValueOf(v).Elem(), path)
			if bytes.Equal(encode(t, k.doc(v)), full) {
				t.Errorf("%T: field %s does not reach the %s document: declare it in api/v1alpha1 and map it in internal/output/convert.go, or list it in notOutput with why",
					k.from, pathString(reflect.TypeOf(k.from).Elem(), path), k.name)
			}
		}
	}
}

// fieldPaths lists the index paths of every exported field under t (through pointers, the
// element of lists and the values of maps), but those notOutput lists.
func fieldPaths(t reflect.Type, prefix []int, depth int) [][]int {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > maxDepth {
		return nil
	}
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || slices.Contains(notOutput[t], f.Name) {
			continue
		}
		p := append(slices.Clone(prefix), i)
		out = append(out, p)
		out = append(out, fieldPaths(f.Type, p, depth+1)...)
	}
	return out
}

// zero sets the field at path under v to its zero value.
func zero(v reflect.Value, path []int) {
	for _, i := range path {
		for {
			switch v.Kind() {
			case reflect.Pointer:
				v = v.Elem()
				continue
			case reflect.Slice:
				v = v.Index(0)
				continue
			case reflect.Map:
				v = v.MapIndex(v.MapKeys()[0])
				continue
			}
			break
		}
		v = v.Field(i)
	}
	v.Set(reflect.Zero(v.Type()))
}

func pathString(t reflect.Type, path []int) string {
	var names []string
	for _, i := range path {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		names = append(names, t.Field(i).Name)
		t = t.Field(i).Type
	}
	return strings.Join(names, ".")
}

// TestWriteRefusesWhatIsNoDocument: a document without this API's apiVersion and one of its
// kinds is never printed.
func TestWriteRefusesWhatIsNoDocument(t *testing.T) {
	for _, doc := range []v1alpha1.Document{
		&v1alpha1.RebaseResult{},
		&v1alpha1.VersionInfo{TypeMeta: v1alpha1.TypeMeta{APIVersion: "v1", Kind: v1alpha1.KindVersion}},
		&v1alpha1.LvmdCheck{TypeMeta: v1alpha1.Meta("Lvmd")},
	} {
		var b bytes.Buffer
		if err := Write(&b, JSON, doc); err == nil || b.Len() > 0 {
			t.Errorf("Write(%#v) = %v, printed %q", doc, err, b.String())
		}
	}
}

func versionInfo() version.Info { return version.Info{Version: "v1.2.3"} }

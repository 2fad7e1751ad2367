package snapshot

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

//go:embed patches.yaml
var defaultPatchesYAML []byte

// Op is one patch operation; see patches.yaml for the semantics of each op.
type Op struct {
	Op     string      `json:"op"`
	Path   []string    `json:"path,omitempty"`
	Value  interface{} `json:"value,omitempty"`
	Create bool        `json:"create,omitempty"`
	From   string      `json:"from,omitempty"`
	To     string      `json:"to,omitempty"`
}

// FileRule maps one operator file to MicroShift file(s).
type FileRule struct {
	// Source is the repository-relative path of the operator file.
	Source string `json:"source"`
	// Output is the MicroShift file name for a single-object source.
	Output string `json:"output,omitempty"`
	// Split maps kinds of a multi-document source to MicroShift file names.
	Split map[string]string `json:"split,omitempty"`
	// Keep also ships a multi-document source whole, under this MicroShift file name, with
	// its documents in source order (MicroShift keeps 05_operand_rbac.yaml next to the
	// files split out of it).
	Keep string `json:"keep,omitempty"`
	// Webhook marks validation-webhook pieces, shipped only when the era has the webhook.
	Webhook bool `json:"webhook,omitempty"`
	// Patches names patch sets applied in order.
	Patches []string `json:"patches,omitempty"`
}

// Patches is the declarative transformation (patches.yaml).
type Patches struct {
	PatchSets map[string][]Op `json:"patchSets"`
	Files     []FileRule      `json:"files"`
}

// DefaultPatches returns the embedded patches.yaml, parsed and checked.
func DefaultPatches() (*Patches, error) {
	return ParsePatches(defaultPatchesYAML)
}

// ParsePatches decodes and checks a patches document: known ops, defined patch sets, one of
// output/split per file, no output file name used twice.
func ParsePatches(data []byte) (*Patches, error) {
	var p Patches
	if err := strictyaml.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decoding snapshot patches: %w", err)
	}
	for name, ops := range p.PatchSets {
		for i, op := range ops {
			switch op.Op {
			case "set", "delete", "removePrefix", "append":
				if len(op.Path) == 0 {
					return nil, fmt.Errorf("snapshot patches: patchSets.%s[%d] (%s): path is empty", name, i, op.Op)
				}
			case "replace":
				if op.From == "" {
					return nil, fmt.Errorf("snapshot patches: patchSets.%s[%d] (replace): from is empty", name, i)
				}
			default:
				return nil, fmt.Errorf("snapshot patches: patchSets.%s[%d]: unknown op %q", name, i, op.Op)
			}
		}
	}
	outputs := map[string]string{}
	for i, f := range p.Files {
		if f.Source == "" || (f.Output == "") == (len(f.Split) == 0) {
			return nil, fmt.Errorf("snapshot patches: files[%d] (%s): expected a source and exactly one of output or split", i, f.Source)
		}
		for _, ps := range f.Patches {
			if _, ok := p.PatchSets[ps]; !ok {
				return nil, fmt.Errorf("snapshot patches: files[%d] (%s): unknown patch set %q", i, f.Source, ps)
			}
		}
		if f.Keep != "" && len(f.Split) == 0 {
			return nil, fmt.Errorf("snapshot patches: files[%d] (%s): keep needs a split source", i, f.Source)
		}
		names := []string{f.Output, f.Keep}
		for _, n := range f.Split {
			names = append(names, n)
		}
		for _, n := range names {
			if n == "" {
				continue
			}
			if prev, ok := outputs[n]; ok {
				return nil, fmt.Errorf("snapshot patches: files[%d] (%s): output %s already produced by %s", i, f.Source, n, prev)
			}
			outputs[n] = f.Source
		}
	}
	return &p, nil
}

// Origin says where an output object comes from and which MicroShift file it is.
type Origin struct {
	// File is the MicroShift file name under assets/components/csi-snapshot-controller/.
	File string
	// Source is the operator file it came from.
	Source string
	// Doc is the object's document index in Source (0 for single-object files).
	Doc int
	// AggregateOnly: the object is shipped only inside its kept multi-document file, the
	// era does not split its kind out (era.SnapshotSplit).
	AggregateOnly bool
}

// Aggregate is a multi-document MicroShift file kept whole (FileRule.Keep).
type Aggregate struct {
	// File is the MicroShift file name under assets/components/csi-snapshot-controller/.
	File string
	// Source is the operator file it mirrors.
	Source string
	// Members are the objects (indexes into Result.Objects) in document order.
	Members []int
}

// Result is the translated snapshot assets.
type Result struct {
	// Commit is the operator commit the assets came from.
	Commit string
	// Objects in patches.yaml file order (split sources in document order).
	Objects []*unstructured.Unstructured
	// Origins[i] describes Objects[i].
	Origins []Origin
	// Skipped lists webhook sources left out because the era does not ship the webhook.
	Skipped []string
	// Aggregates are the multi-document files shipped besides their split objects.
	Aggregates []Aggregate
}

// placeholder matches upstream template variables (${OPERAND_IMAGE}, …) left after patching.
var placeholder = regexp.MustCompile(`\$\{[A-Z_]+\}`)

// Translate applies the embedded patches to assets for era e.
func Translate(a *Assets, e era.Era) (*Result, error) {
	p, err := DefaultPatches()
	if err != nil {
		return nil, err
	}
	return TranslateWith(a, e, p)
}

// TranslateWith applies the given patches to assets for era e. Every listed source must exist;
// a placeholder left in the output or a kind of a split source without a file name is an error.
func TranslateWith(a *Assets, e era.Era, p *Patches) (*Result, error) {
	if e.SnapshotNamespace == "" {
		return nil, fmt.Errorf("era %s: SnapshotNamespace is empty", e.Name)
	}
	vars := map[string]string{"@namespace@": e.SnapshotNamespace}
	res := &Result{Commit: a.Commit}
	for _, rule := range p.Files {
		if rule.Webhook && !e.SnapshotWebhook {
			res.Skipped = append(res.Skipped, rule.Source)
			continue
		}
		data, ok := a.Files[rule.Source]
		if !ok {
			return nil, fmt.Errorf("snapshot assets %s (commit %s): missing %s", a.Source, a.Commit, rule.Source)
		}
		docs, err := decodeAll(data)
		if err != nil {
			return nil, fmt.Errorf("snapshot assets %s (commit %s): decoding %s: %w", a.Source, a.Commit, rule.Source, err)
		}
		if rule.Output != "" && len(docs) != 1 {
			return nil, fmt.Errorf("snapshot assets %s (commit %s): %s holds %d objects, expected 1", a.Source, a.Commit, rule.Source, len(docs))
		}
		seen := map[string]bool{}
		var agg *Aggregate
		if rule.Keep != "" {
			res.Aggregates = append(res.Aggregates, Aggregate{File: rule.Keep, Source: rule.Source})
			agg = &res.Aggregates[len(res.Aggregates)-1]
		}
		for docIdx, doc := range docs {
			kind, _ := doc["kind"].(string)
			file := rule.Output
			if file == "" {
				file = rule.Split[kind]
				if file == "" {
					return nil, fmt.Errorf("snapshot assets %s (commit %s): %s: kind %q has no file in patches split", a.Source, a.Commit, rule.Source, kind)
				}
				if seen[kind] {
					return nil, fmt.Errorf("snapshot assets %s (commit %s): %s: two %s objects for one file %s", a.Source, a.Commit, rule.Source, kind, file)
				}
				seen[kind] = true
			}
			for _, ps := range rule.Patches {
				for i, op := range p.PatchSets[ps] {
					if err := apply(doc, op, vars); err != nil {
						return nil, fmt.Errorf("snapshot assets %s: %s: patch %s[%d] (%s %s): %w", a.Source, rule.Source, ps, i, op.Op, strings.Join(op.Path, "."), err)
					}
				}
			}
			pruneEmptyMetadata(doc)
			if left := findPlaceholders(doc); len(left) > 0 {
				return nil, fmt.Errorf("snapshot assets %s (commit %s): %s: placeholders %s left after patching (add a patch in patches.yaml)",
					a.Source, a.Commit, rule.Source, strings.Join(left, ", "))
			}
			if agg != nil {
				agg.Members = append(agg.Members, len(res.Objects))
			}
			res.Objects = append(res.Objects, &unstructured.Unstructured{Object: doc})
			only := agg != nil && !slices.Contains(e.SnapshotSplit, kind)
			res.Origins = append(res.Origins, Origin{File: file, Source: rule.Source, Doc: docIdx, AggregateOnly: only})
		}
	}
	return res, nil
}

func decodeAll(data []byte) ([]map[string]interface{}, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]interface{}
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if m == nil {
			continue
		}
		if k, _ := m["kind"].(string); k == "" {
			return nil, fmt.Errorf("document %d has no kind", len(out)+1)
		}
		out = append(out, jsonvalue.Normalize(m).(map[string]interface{}))
	}
}

func substitute(v interface{}, vars map[string]string) interface{} {
	switch x := v.(type) {
	case string:
		for k, val := range vars {
			x = strings.ReplaceAll(x, k, val)
		}
		return x
	case map[string]interface{}:
		out := make(map[string]interface{}, len(x))
		for k, val := range x {
			out[k] = substitute(val, vars)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(x))
		for i := range x {
			out[i] = substitute(x[i], vars)
		}
		return out
	}
	return v
}

func apply(doc map[string]interface{}, op Op, vars map[string]string) error {
	value := jsonvalue.Normalize(substitute(op.Value, vars))
	switch op.Op {
	case "replace":
		replaceStrings(doc, op.From, op.To)
		return nil
	case "set":
		return walk(doc, op.Path, op.Create, func(parent map[string]interface{}, key string) error {
			if _, ok := parent[key]; ok || op.Create {
				parent[key] = value
			}
			return nil
		})
	case "delete":
		return walk(doc, op.Path, false, func(parent map[string]interface{}, key string) error {
			delete(parent, key)
			return nil
		})
	case "removePrefix", "append":
		prefix, _ := value.(string)
		return walk(doc, op.Path, false, func(parent map[string]interface{}, key string) error {
			list, ok := parent[key].([]interface{})
			if !ok {
				if _, present := parent[key]; present {
					return fmt.Errorf("%s is not a list", key)
				}
				return nil
			}
			if op.Op == "append" {
				parent[key] = append(list, value)
				return nil
			}
			kept := list[:0:0]
			for _, item := range list {
				if s, ok := item.(string); ok && strings.HasPrefix(s, prefix) {
					continue
				}
				kept = append(kept, item)
			}
			parent[key] = kept
			return nil
		})
	}
	return fmt.Errorf("unknown op %q", op.Op)
}

// walk calls fn with the map holding the last path element, for every match of the path.
// "*" fans out over list elements. Missing intermediate keys end the walk, unless create is
// set, in which case maps are created.
func walk(node interface{}, path []string, create bool, fn func(map[string]interface{}, string) error) error {
	if path[0] == "*" {
		list, ok := node.([]interface{})
		if !ok {
			return nil
		}
		if len(path) == 1 {
			return fmt.Errorf("a path cannot end in *")
		}
		for _, item := range list {
			if err := walk(item, path[1:], create, fn); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := node.(map[string]interface{})
	if !ok {
		return nil
	}
	if len(path) == 1 {
		return fn(m, path[0])
	}
	next, ok := m[path[0]]
	if !ok || next == nil {
		if !create || path[1] == "*" {
			return nil
		}
		next = map[string]interface{}{}
		m[path[0]] = next
	}
	return walk(next, path[1:], create, fn)
}

func replaceStrings(v interface{}, from, to string) {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, val := range x {
			if s, ok := val.(string); ok {
				x[k] = strings.ReplaceAll(s, from, to)
			} else {
				replaceStrings(val, from, to)
			}
		}
	case []interface{}:
		for i, val := range x {
			if s, ok := val.(string); ok {
				x[i] = strings.ReplaceAll(s, from, to)
			} else {
				replaceStrings(val, from, to)
			}
		}
	}
}

func findPlaceholders(v interface{}) []string {
	found := map[string]bool{}
	var visit func(v interface{})
	visit = func(v interface{}) {
		switch x := v.(type) {
		case string:
			for _, m := range placeholder.FindAllString(x, -1) {
				found[m] = true
			}
		case map[string]interface{}:
			for k, val := range x {
				visit(k)
				visit(val)
			}
		case []interface{}:
			for _, val := range x {
				visit(val)
			}
		}
	}
	visit(v)
	return append([]string{}, slices.Sorted(maps.Keys(found))...)
}

// pruneEmptyMetadata drops metadata.labels/annotations emptied by delete ops, so outputs carry
// no `annotations: {}` noise.
func pruneEmptyMetadata(doc map[string]interface{}) {
	meta, ok := doc["metadata"].(map[string]interface{})
	if !ok {
		return
	}
	for _, k := range []string{"labels", "annotations"} {
		if m, ok := meta[k].(map[string]interface{}); ok && len(m) == 0 {
			delete(meta, k)
		}
	}
}

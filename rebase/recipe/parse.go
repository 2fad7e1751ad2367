package recipe

import (
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxItems bounds the list items validate visits with aliases expanded (as PyYAML expands
// them): MicroShift's recipes list a few hundred files, and anchors that each list the one
// before ten times (an alias bomb) would make billions.
const maxItems = 100_000

// validate checks a parsed recipe the way presubmit.py and handle_assets.py read it: a
// mapping with an `assets` list whose items are mappings with a scalar `dir` (and optional
// `files` and `dirs` lists) or a scalar `file`, each `files` item a mapping with a scalar
// `file`. A key given twice in one mapping is refused too: PyYAML keeps the last, this package
// would edit the first. Errors name the line.
func validate(doc *kyaml.Node) error {
	budget := maxItems
	return shape(doc, &budget)
}

// shape is validate with a budget of list items left to visit.
func shape(doc *kyaml.Node, budget *int) error {
	if doc.Kind != kyaml.MappingNode {
		return fmt.Errorf("line %d: expected a mapping with an `assets:` list, found %s", doc.Line, kindName(doc))
	}
	if err := uniqueKeys(doc); err != nil {
		return err
	}
	assets := value(doc, "assets")
	if assets == nil || assets.Kind != kyaml.SequenceNode {
		return fmt.Errorf("line %d: expected an `assets:` list of directory entries", doc.Line)
	}
	return items(assets, "assets", "dir", budget)
}

// items checks the entries of an `assets`, `dirs` or `files` list; key is the field each
// entry must have (an `assets` entry may have `file` instead of `dir`).
func items(list *kyaml.Node, field, key string, budget *int) error {
	for _, it := range list.Content {
		if *budget--; *budget < 0 {
			return fmt.Errorf("line %d: %s: more than %d entries with aliases expanded (anchors listing anchors); write the entries out", it.Line, field, maxItems)
		}
		it = deref(it)
		if it.Kind != kyaml.MappingNode {
			return fmt.Errorf("line %d: %s: expected an entry (a mapping with %s:), found %s", it.Line, field, key, kindName(it))
		}
		if err := uniqueKeys(it); err != nil {
			return err
		}
		if err := entry(it, field, key, budget); err != nil {
			return err
		}
	}
	return nil
}

// entry checks one list item: its name field and, for a directory, its nested lists.
func entry(it *kyaml.Node, field, key string, budget *int) error {
	name, want := value(it, key), key+":"
	if name == nil && field == "assets" {
		key, name, want = "file", value(it, "file"), "dir: or file:"
	}
	if name == nil || name.Kind != kyaml.ScalarNode || name.Value == "" {
		return fmt.Errorf("line %d: %s: expected an entry with a %s name", it.Line, field, want)
	}
	if key != "dir" {
		return nil
	}
	for _, sub := range []struct{ field, key string }{{"files", "file"}, {"dirs", "dir"}} {
		n := value(it, sub.field)
		if n == nil {
			continue
		}
		if n.Kind != kyaml.SequenceNode {
			return fmt.Errorf("line %d: %s (dir %s): expected a list, found %s", n.Line, sub.field, name.Value, kindName(n))
		}
		if err := items(n, sub.field, sub.key, budget); err != nil {
			return err
		}
	}
	return nil
}

// uniqueKeys refuses a mapping that gives a key twice.
func uniqueKeys(m *kyaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if first, ok := seen[k.Value]; ok {
			return fmt.Errorf("line %d: key %q given twice (first on line %d)", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
	}
	return nil
}

// value is the value of key in mapping m (aliases followed), nil when absent.
func value(m *kyaml.Node, key string) *kyaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

func deref(n *kyaml.Node) *kyaml.Node {
	for n.Kind == kyaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *kyaml.Node) string {
	switch n.Kind {
	case kyaml.MappingNode:
		return "a mapping"
	case kyaml.SequenceNode:
		return "a list"
	case kyaml.ScalarNode:
		if n.Tag == kyaml.NodeTagNull {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

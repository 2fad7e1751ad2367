package keepstyle

import (
	"bytes"
	"errors"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// The common rebase change is values only: a digest, a version, an image, a flag. Then the
// file is not re-encoded at all: each changed scalar's bytes are replaced in the original,
// written in the scalar's own style, so blank lines, odd spacing, mixed line ends, wrapped
// flow lists and every other byte around it stay. A change of shape (keys or items added,
// removed or reordered, an alias expanded) goes through the encoder instead.

var errNotValuesOnly = errors.New("the change is not to values only")

// valueEdit is one scalar whose value changed: as the original has it, and as merged.
type valueEdit struct{ orig, now *kyaml.Node }

// spliceValues returns current with the values want changes replaced in place, or
// errNotValuesOnly when the change is of another shape.
func spliceValues(current, want []byte, f form) ([]byte, error) {
	orig, err := parse(current)
	if err != nil {
		return nil, err
	}
	cur, _ := parse(current) // parses: it just did
	wnt, err := parse(want)
	if err != nil {
		return nil, err
	}
	if len(cur) != len(wnt) || len(cur) == 0 {
		return nil, errNotValuesOnly
	}
	var edits []valueEdit
	for i := range cur {
		if err := checkExpansion(cur[i]); err != nil {
			return nil, err
		}
		merge(cur[i], wnt[i])
		if !valueEdits(orig[i], cur[i], &edits) {
			return nil, errNotValuesOnly
		}
	}
	starts := lineStarts(current)
	splices := make([]splice, 0, len(edits))
	for _, e := range edits {
		o := e.orig
		from, to, ok := extent(current, starts, o.Line, o.Column, o.Value, o.Style)
		if !ok || bytes.IndexByte(current[from:to], '\n') >= 0 {
			return nil, errNotValuesOnly
		}
		text, err := scalarText(e.now, f)
		if err != nil {
			return nil, err
		}
		splices = append(splices, splice{from, to, text})
	}
	return applySplices(current, splices), nil
}

// valueEdits walks the original and the merged tree together and collects the scalars whose
// value or type changed; it reports false when anything else differs.
func valueEdits(orig, now *kyaml.Node, out *[]valueEdit) bool {
	if orig.Kind != now.Kind || len(orig.Content) != len(now.Content) || orig.Anchor != now.Anchor {
		return false
	}
	switch orig.Kind {
	case kyaml.AliasNode:
		return orig.Value == now.Value
	case kyaml.ScalarNode:
		if orig.Value != now.Value || orig.ShortTag() != now.ShortTag() {
			*out = append(*out, valueEdit{orig, now})
		}
		return true
	case kyaml.MappingNode:
		for i := 0; i+1 < len(orig.Content); i += 2 {
			if orig.Content[i].Value != now.Content[i].Value {
				return false
			}
		}
	}
	for i := range orig.Content {
		if !valueEdits(orig.Content[i], now.Content[i], out) {
			return false
		}
	}
	return true
}

// scalarText writes one scalar in its style on one line: as JSON in a JSON file, else as
// the YAML encoder writes it alone (quotes kept; a new type's default style).
func scalarText(n *kyaml.Node, f form) ([]byte, error) {
	if f.json {
		var b bytes.Buffer
		err := writeJSONScalar(&b, n)
		return b.Bytes(), err
	}
	if n.Style&(kyaml.LiteralStyle|kyaml.FoldedStyle|kyaml.TaggedStyle) != 0 || strings.Contains(n.Value, "\n") {
		return nil, errNotValuesOnly
	}
	out, err := kyaml.Marshal(&kyaml.Node{Kind: kyaml.ScalarNode, Value: n.Value, Tag: n.Tag, Style: n.Style})
	if err != nil {
		return nil, err
	}
	out = bytes.TrimSuffix(out, []byte("\n"))
	if bytes.IndexByte(out, '\n') >= 0 {
		return nil, errNotValuesOnly
	}
	return out, nil
}

package keepstyle

import (
	"errors"
	"reflect"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Anchors and aliases. An alias means "the same value as the anchor", so:
//   - a change every use of an anchor wants is made once, at the anchor's definition (the
//     definition comes first in the file, so it is merged first), and the aliases, which then
//     already mean what is wanted, stay;
//   - where one use wants another value, that alias alone is expanded into its own copy of
//     the value, edited toward what is wanted; the anchor and the other aliases stay.
//
// The alternative, failing, would stop an unattended rebase over a formatting choice when a
// correct and reviewable file exists: the expanded node is exactly what changed in meaning.
// When even that cannot reproduce the wanted objects (an anchor's definition edited after
// one of its aliases was compared, an alias moved before its anchor), the file is edited
// with every alias expanded, and only if that fails is it rewritten whole.

// maxExpansion caps the nodes one alias expansion may create, and checkExpansion the
// growth a document's aliases may cause (a few times its written size): a file of nested
// aliases (a "billion laughs") must cost neither memory nor time; such a file is not
// edited but rewritten whole.
const maxExpansion = 1 << 20

var errTooManyAliases = errors.New("aliases expand to too many nodes")

// checkExpansion fails when doc's aliases would make it much larger than it is written.
func checkExpansion(doc *kyaml.Node) error {
	written := 0
	sizes := map[*kyaml.Node]int{}
	var size func(n *kyaml.Node) int
	size = func(n *kyaml.Node) int {
		if s, ok := sizes[n]; ok {
			return s
		}
		s := 1
		if n.Kind == kyaml.AliasNode && n.Alias != nil {
			s = size(n.Alias)
		} else {
			written++
		}
		for _, c := range n.Content {
			s = min(s+size(c), maxExpansion+1)
		}
		sizes[n] = s
		return s
	}
	if size(doc) > 4*written+4096 {
		return errTooManyAliases
	}
	return nil
}

// hasAlias reports whether an alias occurs under n.
func hasAlias(n *kyaml.Node) bool {
	if n.Kind == kyaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// expanded returns a copy of n with every alias replaced by a copy of its anchor's value and
// no anchors: a subtree that can be decoded on its own.
func expanded(n *kyaml.Node) (*kyaml.Node, error) {
	budget := maxExpansion
	return expandCopy(n, &budget)
}

func expandCopy(n *kyaml.Node, budget *int) (*kyaml.Node, error) {
	if *budget--; *budget < 0 {
		return nil, errTooManyAliases
	}
	if n.Kind == kyaml.AliasNode && n.Alias != nil {
		c, err := expandCopy(n.Alias, budget)
		if err != nil {
			return nil, err
		}
		c.HeadComment, c.LineComment, c.FootComment = n.HeadComment, n.LineComment, n.FootComment
		return c, nil
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*kyaml.Node, len(n.Content))
	for i, x := range n.Content {
		var err error
		if c.Content[i], err = expandCopy(x, budget); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// expandAll replaces every alias of the documents by its value, in place.
func expandAll(docs []*kyaml.Node) error {
	for i, d := range docs {
		e, err := expanded(d)
		if err != nil {
			return err
		}
		docs[i] = e
	}
	return nil
}

// mergeAlias keeps alias cur when its anchor's value (as edited so far) is what is wanted,
// and otherwise puts an edited copy of that value in its place.
func mergeAlias(cur, want *kyaml.Node) {
	target, err := value(cur.Alias)
	if err == nil {
		if w, werr := value(want); werr == nil && reflect.DeepEqual(target, w) {
			return
		}
	}
	c, err := expanded(cur.Alias)
	if err != nil {
		replace(cur, want)
		return
	}
	merge(c, want)
	replace(cur, c)
}

// clearAnchors removes the anchors under n (a copy must not define an anchor a second time:
// later aliases would then mean the copy).
func clearAnchors(n *kyaml.Node) {
	n.Anchor = ""
	for _, c := range n.Content {
		clearAnchors(c)
	}
}

// Merge keys ("<<: *defaults") give a mapping the keys of other mappings it does not set
// itself. They stay when every key they give is still wanted: a given key whose value must
// change is overridden by an explicit key, as a person would write it. When a given key
// must go, no override can remove it, so the merge is expanded into explicit keys.

// isMergeKey reports whether a mapping key is the merge key "<<".
func isMergeKey(k *kyaml.Node) bool {
	return k.Kind == kyaml.ScalarNode && k.Value == "<<" && k.Style&(kyaml.DoubleQuotedStyle|kyaml.SingleQuotedStyle) == 0
}

// inherited returns the keys m's merge keys give it (the first source wins, as YAML says)
// and whether they can stay: every given key m does not set itself is in wanted.
func inherited(m *kyaml.Node, wanted map[string]int) (map[string]*kyaml.Node, bool) {
	own := map[string]bool{}
	var sources []*kyaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !isMergeKey(m.Content[i]) {
			own[m.Content[i].Value] = true
			continue
		}
		v := m.Content[i+1]
		if v.Kind == kyaml.SequenceNode {
			sources = append(sources, v.Content...)
		} else {
			sources = append(sources, v)
		}
	}
	given := map[string]*kyaml.Node{}
	for _, s := range sources {
		if s.Kind == kyaml.AliasNode && s.Alias != nil {
			s = s.Alias
		}
		if s.Kind != kyaml.MappingNode {
			return nil, false
		}
		for i := 0; i+1 < len(s.Content); i += 2 {
			k := s.Content[i].Value
			if _, ok := given[k]; !ok && !own[k] {
				given[k] = s.Content[i+1]
			}
		}
	}
	for k, v := range given {
		if _, ok := wanted[k]; !ok && !isNull(v) {
			return nil, false
		}
	}
	return given, true
}

// sameValue reports whether two nodes decode to the same value.
func sameValue(a, b *kyaml.Node) bool {
	va, errA := value(a)
	vb, errB := value(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// untagMergeKeys drops the resolved "!!merge" tag of merge keys, which the encoder would
// otherwise write out ("!!merge <<: *b"); without it "<<" resolves to a merge key again.
func untagMergeKeys(n *kyaml.Node) {
	if n.Kind == kyaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isMergeKey(n.Content[i]) {
				n.Content[i].Tag = ""
			}
		}
	}
	for _, c := range n.Content {
		untagMergeKeys(c)
	}
}

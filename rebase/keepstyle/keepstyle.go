// Package keepstyle makes rewritten asset files reviewable: a file whose objects did not
// change in meaning keeps its bytes, and a file whose objects changed is produced by editing
// the file's own YAML node tree toward the new objects, so key order, quoting, comments,
// indentation and block or flow lists stay as the file had them. A maintainer then reviews
// only the lines whose meaning changed.
//
// A change of values only edits the original bytes where those values are (values.go), so
// every other byte stays whatever its form. Any other change is encoded in the file's form
// (form.go): CRLF line ends, a missing final newline, the indentation width (2 or 4 spaces)
// and list indentation, a YAML file written as pretty JSON (written back as JSON with its
// indentation unit), anchors, aliases and merge keys (anchors.go says what a change under
// an anchor does), and laid back onto the original line by line (lines.go) so that blank
// lines, aligned values and other formatting away from the change stay too.
//
// "Meaning" is what a Kubernetes decoder sees: documents decoded to JSON values with null
// fields dropped (so `creationTimestamp: null` or a missing trailing newline is formatting).
package keepstyle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
)

// Docs decodes every non-empty document of a YAML (or JSON) file into its JSON value with
// null map values dropped.
func Docs(data []byte) ([]interface{}, error) {
	nodes, err := parse(data)
	if err != nil {
		return nil, err
	}
	out := make([]interface{}, 0, len(nodes))
	for i, n := range nodes {
		v, err := value(n)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// value converts a node into a JSON value (what sigs.k8s.io/yaml decodes); aliases under it
// stand for their anchors' values.
func value(n *kyaml.Node) (interface{}, error) {
	if n.Kind != kyaml.DocumentNode && hasAlias(n) {
		e, err := expanded(n)
		if err != nil {
			return nil, err
		}
		n = e
	}
	b, err := kyaml.Marshal(n)
	if err != nil {
		return nil, err
	}
	var v interface{}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	jsonvalue.PruneNulls(v)
	return v, nil
}

// Equal reports whether a and b hold the same documents in meaning. A file that does not
// parse equals nothing.
func Equal(a, b []byte) bool {
	da, err := Docs(a)
	if err != nil {
		return false
	}
	db, err := Docs(b)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(da, db)
}

// Apply returns the bytes to write for want when the file currently holds current:
//   - current itself when both mean the same;
//   - current's node tree edited toward want when both parse and have as many documents,
//     written in the file's form: its line ends (CRLF stays CRLF), final newline or its
//     absence, indentation width and list indentation, JSON when the file is JSON, anchors
//     and aliases (see anchors.go);
//   - want otherwise (no current file, a file that does not parse, documents added or removed).
//
// The result always means exactly what want means; when an edit cannot guarantee that, want
// is returned.
func Apply(current, want []byte) []byte {
	if len(current) == 0 {
		return want
	}
	if Equal(current, want) {
		return current
	}
	lf, crlf := toLF(current)
	f := formOf(lf, crlf)
	// Values only: the original bytes with the changed values replaced (values.go); else
	// the node tree edited and encoded in the file's form, aliases kept, then expanded.
	tries := []func() ([]byte, error){
		func() ([]byte, error) { return spliceValues(lf, want, f) },
		func() ([]byte, error) { return edit(lf, want, f, false) },
		func() ([]byte, error) { return edit(lf, want, f, true) },
	}
	for _, try := range tries {
		edited, err := try()
		if err != nil {
			continue
		}
		if out := f.finish(edited); Equal(out, want) {
			return out
		}
	}
	return want
}

// edit merges current's node tree toward want and encodes it in form f; with expand, every
// alias is first replaced by its value.
func edit(current, want []byte, f form, expand bool) ([]byte, error) {
	cur, err := parse(current)
	if err != nil {
		return nil, err
	}
	wnt, err := parse(want)
	if err != nil {
		return nil, err
	}
	if len(cur) != len(wnt) || len(cur) == 0 {
		return nil, errors.New("document counts differ")
	}
	for _, d := range cur {
		if err := checkExpansion(d); err != nil {
			return nil, err
		}
	}
	if expand {
		if err := expandAll(cur); err != nil {
			return nil, err
		}
	}
	snap := scalarSnapshot(cur)
	base, err := encodeAs(cur, current, f, snap)
	if err != nil {
		return nil, err
	}
	for i := range cur {
		merge(cur[i], wnt[i])
	}
	edited, err := encodeAs(cur, current, f, snap)
	if err != nil {
		return nil, err
	}
	// The original's formatting where the change is not (lines.go).
	if merged, ok := mergeLines(string(base), string(current), string(edited)); ok && Equal([]byte(merged), want) {
		return []byte(merged), nil
	}
	return edited, nil
}

// encodeAs encodes documents in form f, with the original bytes of unchanged wrapped
// scalars put back (see wrap.go).
func encodeAs(docs []*kyaml.Node, original []byte, f form, snap map[*kyaml.Node]origScalar) ([]byte, error) {
	if f.json {
		return encodeJSON(docs, f)
	}
	encoded, err := encode(docs, string(original), f)
	if err != nil {
		return nil, err
	}
	return rewrap(original, encoded, docs, snap), nil
}

// parse splits a file into its non-empty document nodes.
func parse(data []byte) ([]*kyaml.Node, error) {
	dec := kyaml.NewDecoder(bytes.NewReader(data))
	var out []*kyaml.Node
	for {
		var doc kyaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 {
			continue
		}
		out = append(out, &doc)
	}
}

// encode writes documents back with the indentation and sequence style of the original,
// keeping a leading "---" when the original had one.
func encode(docs []*kyaml.Node, original string, f form) ([]byte, error) {
	var buf bytes.Buffer
	if strings.HasPrefix(original, "---") {
		buf.WriteString("---\n")
	}
	for i, d := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		untagMergeKeys(d)
		var one bytes.Buffer
		enc := f.encoder(&one)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		buf.Write(one.Bytes())
	}
	return buf.Bytes(), nil
}

// merge edits node cur in place so that it means what want means, touching as little as it can.
func merge(cur, want *kyaml.Node) {
	switch {
	case cur.Kind == kyaml.DocumentNode && want.Kind == kyaml.DocumentNode:
		merge(cur.Content[0], want.Content[0])
	case cur.Kind == kyaml.AliasNode && cur.Alias != nil:
		mergeAlias(cur, want)
	case cur.Kind == kyaml.MappingNode && want.Kind == kyaml.MappingNode:
		mergeMap(cur, want)
	case cur.Kind == kyaml.SequenceNode && want.Kind == kyaml.SequenceNode:
		mergeSeq(cur, want)
	case cur.Kind == kyaml.ScalarNode && want.Kind == kyaml.ScalarNode:
		mergeScalar(cur, want)
	default:
		replace(cur, want)
	}
}

// replace puts want in cur's place, keeping cur's comments and anchor (aliases of it then
// mean the new value, which mergeAlias checks where they stand).
func replace(cur, want *kyaml.Node) {
	head, line, foot, anchor := cur.HeadComment, cur.LineComment, cur.FootComment, cur.Anchor
	*cur = *want
	cur.HeadComment, cur.LineComment, cur.FootComment, cur.Anchor = head, line, foot, anchor
}

func mergeMap(cur, want *kyaml.Node) {
	wantIdx := map[string]int{}
	for i := 0; i+1 < len(want.Content); i += 2 {
		wantIdx[want.Content[i].Value] = i
	}
	given, keepMerges := inherited(cur, wantIdx)
	kept := cur.Content[:0:0]
	have := map[string]bool{}
	for i := 0; i+1 < len(cur.Content); i += 2 {
		k := cur.Content[i].Value
		if isMergeKey(cur.Content[i]) {
			if keepMerges {
				kept = append(kept, cur.Content[i], cur.Content[i+1])
			}
			continue
		}
		j, ok := wantIdx[k]
		if !ok && !have[k] && isNull(cur.Content[i+1]) {
			// `creationTimestamp: null` and the like mean the same as an absent key:
			// MicroShift's files carry them, so dropping them would be formatting noise.
			have[k] = true
			kept = append(kept, cur.Content[i], cur.Content[i+1])
			continue
		}
		if !ok || have[k] {
			continue // dropped key (or a duplicate, which no decoder keeps)
		}
		have[k] = true
		merge(cur.Content[i+1], want.Content[j+1])
		kept = append(kept, cur.Content[i], cur.Content[i+1])
	}
	for i := 0; i+1 < len(want.Content); i += 2 {
		k := want.Content[i].Value
		if g, ok := given[k]; ok && keepMerges && sameValue(g, want.Content[i+1]) {
			continue // a merge key gives it already
		}
		if !have[k] {
			kept = append(kept, want.Content[i], want.Content[i+1])
		}
	}
	cur.Content = kept
}

// isNull reports whether n is an explicit YAML null (`null`, `~` or an empty value).
func isNull(n *kyaml.Node) bool {
	return n.Kind == kyaml.ScalarNode && n.ShortTag() == kyaml.NodeTagNull
}

// mergeSeq pairs items by their "name" field when every item of both lists has a distinct
// one (containers, env, ports, volumes). Otherwise see pairItems.
func mergeSeq(cur, want *kyaml.Node) {
	curNames, okC := itemNames(cur)
	wantNames, okW := itemNames(want)
	if okC && okW {
		byName := map[string]*kyaml.Node{}
		for i, n := range curNames {
			byName[n] = cur.Content[i]
		}
		out := make([]*kyaml.Node, 0, len(want.Content))
		for i, n := range wantNames {
			if c, ok := byName[n]; ok {
				merge(c, want.Content[i])
				out = append(out, c)
			} else {
				out = append(out, styledLike(cur.Content, want.Content[i]))
			}
		}
		cur.Content = out
		return
	}
	cur.Content = pairItems(cur.Content, want.Content)
}

// pairItems returns the merged list. An item that did not change in meaning is kept as it is
// wherever it moved (a dropped or inserted rule leaves its neighbours alone); a changed item
// is paired with the old item it resembles most (equal fields, same name), so it keeps its
// node; the rest are paired in order, and an item still left over is new and is written in
// the style of its siblings.
func pairItems(cur, want []*kyaml.Node) []*kyaml.Node {
	curVals, wantVals := values(cur), values(want)
	used := make([]bool, len(cur))
	out := make([]*kyaml.Node, len(want))
	for i := range want {
		for k := range cur {
			if !used[k] && wantVals[i] != nil && reflect.DeepEqual(curVals[k], wantVals[i]) {
				used[k], out[i] = true, cur[k]
				break
			}
		}
	}
	for _, p := range similarPairs(curVals, wantVals, used, out) {
		used[p.cur], out[p.want] = true, cur[p.cur]
		merge(cur[p.cur], want[p.want])
	}
	next := 0
	for i, w := range want {
		if out[i] != nil {
			continue
		}
		for next < len(cur) && used[next] {
			next++
		}
		if next < len(cur) && (cur[next].Kind != kyaml.ScalarNode || lendsStyle(cur[next], w)) {
			used[next] = true
			merge(cur[next], w)
			out[i] = cur[next]
			continue
		}
		out[i] = styledLike(cur, w)
	}
	return out
}

// values decodes every item; an item that does not decode is nil.
func values(items []*kyaml.Node) []interface{} {
	out := make([]interface{}, len(items))
	for i, n := range items {
		out[i], _ = value(n)
	}
	return out
}

type pair struct{ cur, want, score int }

// similarPairs pairs the changed items that still resemble an old one, best resemblance first.
func similarPairs(curVals, wantVals []interface{}, used []bool, out []*kyaml.Node) []pair {
	var cands []pair
	for i, w := range wantVals {
		for k, c := range curVals {
			if out[i] == nil && !used[k] {
				if s := similarity(c, w); s > 0 {
					cands = append(cands, pair{k, i, s})
				}
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	takenC, takenW := map[int]bool{}, map[int]bool{}
	var pairs []pair
	for _, p := range cands {
		if !takenC[p.cur] && !takenW[p.want] {
			takenC[p.cur], takenW[p.want] = true, true
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// similarity scores how much a changed item resembles an old one: a same name counts most,
// then every field with an equal value, then every field both have.
func similarity(a, b interface{}) int {
	ma, okA := a.(map[string]interface{})
	mb, okB := b.(map[string]interface{})
	if !okA || !okB {
		return 0
	}
	score := 0
	for k, va := range ma {
		vb, ok := mb[k]
		switch {
		case !ok:
		case k == "name" && reflect.DeepEqual(va, vb):
			score += 1000
		case reflect.DeepEqual(va, vb):
			score += 10
		}
	}
	if score == 0 {
		return 0
	}
	return score + sharedKeys(ma, mb)
}

func sharedKeys(a, b map[string]interface{}) int {
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return n
}

// styledLike returns a new item w written like its siblings: a copy of the most alike old item
// of the same kind edited toward w, or w itself when there is none. A sibling that had to be
// quoted (an empty or non-string-looking value) lends no quotes.
func styledLike(siblings []*kyaml.Node, w *kyaml.Node) *kyaml.Node {
	wv, _ := value(w)
	var best *kyaml.Node
	bestScore, bestEmpty := -1, 0
	for _, s := range siblings {
		if s.Kind != w.Kind || (s.Kind == kyaml.ScalarNode && !lendsStyle(s, w)) {
			continue
		}
		sv, _ := value(s)
		score, empty := similarity(sv, wv)+sharedKeysOf(sv, wv), emptyStrings(s)
		if score > bestScore || score == bestScore && empty < bestEmpty {
			best, bestScore, bestEmpty = s, score, empty
		}
	}
	if best == nil {
		return w
	}
	c := deepCopy(best)
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	clearAnchors(c)
	merge(c, w)
	return c
}

// emptyStrings counts the empty strings under n: their forced quotes say nothing of the
// file's style, so a sibling without them is the better model.
func emptyStrings(n *kyaml.Node) int {
	c := 0
	if n.Kind == kyaml.ScalarNode && n.Value == "" && n.ShortTag() == "!!str" {
		c++
	}
	for _, x := range n.Content {
		c += emptyStrings(x)
	}
	return c
}

func sharedKeysOf(a, b interface{}) int {
	ma, okA := a.(map[string]interface{})
	mb, okB := b.(map[string]interface{})
	if !okA || !okB {
		return 0
	}
	return sharedKeys(ma, mb)
}

// lendsStyle reports whether scalar sibling s may give its quoting to new scalar w: same type,
// and s is not an empty string, which YAML forces into quotes.
func lendsStyle(s, w *kyaml.Node) bool {
	return s.ShortTag() == w.ShortTag() && s.Value != ""
}

func deepCopy(n *kyaml.Node) *kyaml.Node {
	c := *n
	c.Content = make([]*kyaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}

func itemNames(seq *kyaml.Node) ([]string, bool) {
	names := make([]string, 0, len(seq.Content))
	seen := map[string]bool{}
	for _, item := range seq.Content {
		if item.Kind != kyaml.MappingNode {
			return nil, false
		}
		name := ""
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "name" && item.Content[i+1].Kind == kyaml.ScalarNode {
				name = item.Content[i+1].Value
			}
		}
		if name == "" || seen[name] {
			return nil, false
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, len(names) > 0
}

// mergeScalar takes want's value; the file's quoting style stays when the type does.
func mergeScalar(cur, want *kyaml.Node) {
	if cur.Value == want.Value && cur.ShortTag() == want.ShortTag() {
		return
	}
	restyle := cur.ShortTag() != want.ShortTag() ||
		strings.Contains(want.Value, "\n") != strings.Contains(cur.Value, "\n")
	cur.Value, cur.Tag = want.Value, want.Tag
	if restyle {
		cur.Style = want.Style
	}
}

// Document returns document i of a multi-document file on its own, formatted as the file is.
func Document(data []byte, i int) ([]byte, error) {
	docs, err := parse(data)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(docs) {
		return nil, fmt.Errorf("document %d: the file has %d", i+1, len(docs))
	}
	lf, crlf := toLF(data)
	f := formOf(lf, crlf)
	if f.json {
		out, err := encodeJSON(docs[i:i+1], f)
		return f.finish(out), err
	}
	out, err := encode(docs[i:i+1], strings.TrimPrefix(string(lf), "---"), f)
	return f.finish(out), err
}

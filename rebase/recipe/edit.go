package recipe

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// span is an inclusive range of 1-based line numbers.
type span struct{ from, to int }

// reconcile edits the files list of one directory entry; see Reconcile for the rules.
func (rf *recipeFile) reconcile(entry *kyaml.RNode, c Component, before map[string]bool, after []string) (Change, error) {
	ch := Change{Recipe: rf.path, Dir: c.Dir}
	files := entry.Field("files")
	var items []*kyaml.RNode
	if files != nil {
		var err error
		if items, err = files.Value.Elements(); err != nil {
			return ch, fmt.Errorf("files: %w", err)
		}
	}
	if len(items) == 0 {
		return rf.fillEmpty(entry, files, c, before, after)
	}
	want := set(after)
	listed := map[string]bool{}
	var drops []span
	end := 0
	lines := strings.SplitAfter(string(rf.data), "\n")
	for i, it := range items {
		f := it.Field("file")
		if f == nil {
			return ch, fmt.Errorf("line %d: an entry without file", it.YNode().Line)
		}
		name := kyaml.GetValue(f.Value)
		s := span{it.YNode().Line, lastLine(it.YNode())}
		end = max(end, s.to)
		ignored := it.Field("ignore") != nil
		if !want[name] && (!ignored || before[name]) {
			s.from -= groupComment(lines, items, i)
			drops = append(drops, s)
			ch.Dropped = append(ch.Dropped, name)
			continue
		}
		listed[name] = true
	}
	var added []string
	for _, name := range after {
		if !listed[name] {
			added = append(added, name)
		}
	}
	ch.Added = added
	if len(added)+len(drops) == 0 {
		return ch, nil
	}
	dash, err := itemPrefix(lines, items[0].YNode())
	if err != nil {
		return ch, err
	}
	eol := lineEnd(rf.data)
	rf.data = []byte(splice(lines, drops, end, newEntries(dash, added, c, eol), eol))
	return ch, rf.check(c.Dir, after, before)
}

// fillEmpty writes the list of an entry that has none yet ("files: []" or no files key),
// indented as block lists under the entry's keys.
func (rf *recipeFile) fillEmpty(entry *kyaml.RNode, files *kyaml.MapNode, c Component, before map[string]bool, after []string) (Change, error) {
	ch := Change{Recipe: rf.path, Dir: c.Dir, Added: after}
	if len(after) == 0 {
		return Change{Recipe: rf.path, Dir: c.Dir}, nil
	}
	lines := strings.SplitAfter(string(rf.data), "\n")
	keyCol := entry.YNode().Column - 1
	indent, eol := strings.Repeat(" ", keyCol), lineEnd(rf.data)
	text := indent + "files:" + eol + newEntries(indent+"  - ", after, c, eol)
	var drops []span
	end := lastLine(entry.YNode())
	if files != nil {
		line := files.Key.YNode().Line
		if line != files.Value.YNode().Line {
			return ch, fmt.Errorf("line %d: expected an empty files list on one line", line)
		}
		drops, end = []span{{line, line}}, line
	}
	rf.data = []byte(splice(lines, drops, end, text, eol))
	return ch, rf.check(c.Dir, after, before)
}

// itemPrefix returns the text before "file:" on an item's first line ("    - "), which new
// entries copy so that they line up with the others.
func itemPrefix(lines []string, item *kyaml.Node) (string, error) {
	if item.Line < 1 || item.Line > len(lines) {
		return "", fmt.Errorf("line %d: out of range", item.Line)
	}
	l := lines[item.Line-1]
	i := strings.Index(l, "- ")
	if i < 0 || strings.TrimSpace(l[:i]) != "" {
		return "", fmt.Errorf("line %d: expected a block list item (\"- file: …\"), found %q", item.Line, strings.TrimSpace(l))
	}
	return l[:i+2], nil
}

// newEntries are the entries of names, each line ended with eol.
func newEntries(dash string, names []string, c Component, eol string) string {
	var b strings.Builder
	cont := strings.Repeat(" ", len(dash))
	for _, n := range names {
		fmt.Fprintf(&b, "%sfile: %s%s", dash, n, eol)
		if src := c.Src[n]; src != "" {
			fmt.Fprintf(&b, "%ssrc: %s%s", cont, src, eol)
		}
		if r := c.Ignore[n]; r != "" {
			fmt.Fprintf(&b, "%signore: %s%s", cont, strconv.Quote(r), eol)
		}
	}
	return b.String()
}

// lineEnd is the line end a recipe uses: CRLF when most of its lines end so, else LF.
func lineEnd(data []byte) string {
	if n := bytes.Count(data, []byte("\n")); n > 0 && 2*bytes.Count(data, []byte("\r\n")) > n {
		return "\r\n"
	}
	return "\n"
}

// splice drops the given line spans and inserts text after line end; a last line without a
// line end gets eol before the text.
func splice(lines []string, drops []span, end int, text, eol string) string {
	var b strings.Builder
	for i, l := range lines {
		n := i + 1
		dropped := false
		for _, d := range drops {
			dropped = dropped || (n >= d.from && n <= d.to)
		}
		if !dropped {
			b.WriteString(l)
		}
		if n == end {
			if !strings.HasSuffix(l, "\n") {
				b.WriteString(eol)
			}
			b.WriteString(text)
		}
	}
	return b.String()
}

// lastLine is the last line any node of the subtree is on.
func lastLine(n *kyaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}

// check re-parses the edited recipe and verifies the directory's list now holds exactly the
// files after the run plus ignored entries the run did not touch, each once.
func (rf *recipeFile) check(dir string, after []string, before map[string]bool) error {
	matches, err := findEntries([]*recipeFile{rf}, dir)
	if err != nil {
		return fmt.Errorf("the edited recipe: %w", err)
	}
	if len(matches) != 1 {
		return fmt.Errorf("the edited recipe lost the directory entry")
	}
	entry := matches[0].node
	f := entry.Field("files")
	if f == nil {
		return fmt.Errorf("the edited recipe has no files list")
	}
	items, err := f.Value.Elements()
	if err != nil {
		return fmt.Errorf("the edited recipe does not parse: %w", err)
	}
	want := set(after)
	seen := map[string]bool{}
	for _, it := range items {
		name := kyaml.GetValue(it.Field("file").Value)
		if seen[name] {
			return fmt.Errorf("the edited recipe lists %s twice", name)
		}
		seen[name] = true
		if !want[name] && (it.Field("ignore") == nil || before[name]) {
			return fmt.Errorf("the edited recipe still lists %s", name)
		}
	}
	for _, n := range after {
		if !seen[n] {
			return fmt.Errorf("the edited recipe does not list %s", n)
		}
	}
	return nil
}

// commentAbove counts the comment lines directly above a 1-based line.
func commentAbove(lines []string, line int) int {
	n := 0
	for l := line - 1; l >= 1 && l <= len(lines) && strings.HasPrefix(strings.TrimSpace(lines[l-1]), "#"); l-- {
		n++
	}
	return n
}

// groupComment is the number of comment lines above item i that go with it when it is
// dropped: its group comment ("# Webhook") when no item of the group remains after it, else
// none, so the comment stays with the rest of its group.
func groupComment(lines []string, items []*kyaml.RNode, i int) int {
	n := commentAbove(lines, items[i].YNode().Line)
	if n == 0 {
		return 0
	}
	if i+1 < len(items) && commentAbove(lines, items[i+1].YNode().Line) == 0 {
		return 0 // the next item belongs to the same group
	}
	return n
}

package keepstyle

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// The encoder behind kyaml never wraps long scalars, while MicroShift's files (written by
// yq/PyYAML) wrap plain and quoted scalars at about 80 columns. Neither the encoder's width
// nor PyYAML's folding rules can be reproduced through kyaml, so an edited file gets the
// original bytes of every unchanged multi-line scalar spliced back over its one-line
// re-encoding: unchanged values keep their line breaks exactly.

// origScalar is where and how a scalar of the original file was written.
type origScalar struct {
	line, column int
	value        string
	style        kyaml.Style
}

// scalarSnapshot records every scalar of the original documents before they are edited.
func scalarSnapshot(docs []*kyaml.Node) map[*kyaml.Node]origScalar {
	out := map[*kyaml.Node]origScalar{}
	var walk func(n *kyaml.Node)
	walk = func(n *kyaml.Node) {
		if n.Kind == kyaml.ScalarNode {
			out[n] = origScalar{n.Line, n.Column, n.Value, n.Style}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, d := range docs {
		walk(d)
	}
	return out
}

// splice is one byte range of the encoded output to replace with original bytes.
type splice struct {
	start, end int
	text       []byte
}

// rewrap puts back the original text of every unchanged scalar that the original wrote over
// several lines. It returns encoded unchanged when the trees do not line up or the result
// would not mean the same.
func rewrap(original, encoded []byte, edited []*kyaml.Node, snap map[*kyaml.Node]origScalar) []byte {
	reparsed, err := parse(encoded)
	if err != nil || len(reparsed) != len(edited) {
		return encoded
	}
	src, dst := lineStarts(original), lineStarts(encoded)
	var splices []splice
	ok := true
	var walk func(e, r *kyaml.Node)
	walk = func(e, r *kyaml.Node) {
		if !ok || e.Kind != r.Kind || len(e.Content) != len(r.Content) {
			ok = false
			return
		}
		if s, found := snap[e]; found && e.Kind == kyaml.ScalarNode {
			if sp, use := scalarSplice(original, encoded, src, dst, s, e, r); use {
				splices = append(splices, sp)
			}
		}
		for i := range e.Content {
			walk(e.Content[i], r.Content[i])
		}
	}
	for i := range edited {
		walk(edited[i], reparsed[i])
	}
	if !ok || len(splices) == 0 {
		return encoded
	}
	out := applySplices(encoded, splices)
	if !Equal(out, encoded) {
		return encoded
	}
	return out
}

// scalarSplice returns the splice for edited scalar e (re-encoded as r) when it still holds
// the original value and style and the original spread it over several lines.
func scalarSplice(original, encoded []byte, src, dst []int, s origScalar, e, r *kyaml.Node) (splice, bool) {
	if e.Value != s.value || e.Style != s.style || r.Value != s.value || r.Column != s.column {
		return splice{}, false
	}
	from, to, ok := extent(original, src, s.line, s.column, s.value, s.style)
	if !ok || !bytes.Contains(original[from:to], []byte("\n")) {
		return splice{}, false
	}
	dFrom, dTo, ok := extent(encoded, dst, r.Line, r.Column, r.Value, r.Style)
	if !ok {
		return splice{}, false
	}
	return splice{dFrom, dTo, original[from:to]}, true
}

func applySplices(data []byte, splices []splice) []byte {
	sort.Slice(splices, func(i, j int) bool { return splices[i].start < splices[j].start })
	var out bytes.Buffer
	last := 0
	for _, s := range splices {
		if s.start < last {
			continue // overlapping ranges cannot happen in one tree; be safe anyway
		}
		out.Write(data[last:s.start])
		out.Write(s.text)
		last = s.end
	}
	out.Write(data[last:])
	return out.Bytes()
}

// lineStarts returns the byte offset of every line's start (index 0 is line 1).
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// extent returns the byte range of the scalar written at line/column (1-based, columns in
// characters as the YAML parser counts them), checked against its value.
func extent(data []byte, starts []int, line, column int, value string, style kyaml.Style) (int, int, bool) {
	if line < 1 || line > len(starts) {
		return 0, 0, false
	}
	at := starts[line-1]
	for c := 1; c < column && at < len(data) && data[at] != '\n'; c++ {
		_, size := utf8.DecodeRune(data[at:])
		at += size
	}
	switch {
	case style&(kyaml.TaggedStyle|kyaml.FoldedStyle) != 0:
		return 0, 0, false
	case style&kyaml.LiteralStyle != 0:
		return literalEnd(data, at)
	case style&kyaml.DoubleQuotedStyle != 0:
		return quotedEnd(data, at, '"')
	case style&kyaml.SingleQuotedStyle != 0:
		return quotedEnd(data, at, '\'')
	}
	return plainEnd(data, at, value)
}

// quotedEnd finds the closing quote of the quoted scalar opening at start.
func quotedEnd(data []byte, start int, q byte) (int, int, bool) {
	if start >= len(data) || data[start] != q {
		return 0, 0, false
	}
	for i := start + 1; i < len(data); i++ {
		switch {
		case q == '"' && data[i] == '\\':
			i++
		case data[i] == q && q == '\'' && i+1 < len(data) && data[i+1] == '\'':
			i++
		case data[i] == q:
			return start, i + 1, true
		}
	}
	return 0, 0, false
}

// plainEnd finds the end of the plain scalar starting at start by folding its lines (one
// line break becomes a space, n blank lines become n newlines) until they give value.
func plainEnd(data []byte, start int, value string) (int, int, bool) {
	first, rest, _ := bytes.Cut(data[start:], []byte("\n"))
	if !strings.Contains(value, "\n") && bytes.HasPrefix(first, []byte(value)) {
		return start, start + len(value), true
	}
	seg := string(bytes.TrimRight(first, " \t\r"))
	if seg == "" || !strings.HasPrefix(value, seg) {
		return 0, 0, false
	}
	p, end, blanks := len(seg), start+len(seg), 0
	off := start + len(first) + 1
	for p < len(value) && off <= len(data) {
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		rest = rest[min(len(line)+1, len(rest)):]
		trimmed := strings.TrimSpace(string(line))
		lineStart := off
		off += len(line) + 1
		if trimmed == "" {
			blanks++
			continue
		}
		sep := " "
		if blanks > 0 {
			sep = strings.Repeat("\n", blanks)
		}
		if !strings.HasPrefix(value[p:], sep+trimmed) {
			return 0, 0, false
		}
		p += len(sep) + len(trimmed)
		end = lineStart + strings.Index(string(line), trimmed) + len(trimmed)
		blanks = 0
		if len(rest) == 0 && p < len(value) {
			return 0, 0, false
		}
	}
	return start, end, p == len(value)
}

// literalEnd finds the end of the literal block scalar whose "|" header is at start: its last
// non-blank line indented at least as deep as its first one. The encoder writes a plain value
// holding line breaks this way.
func literalEnd(data []byte, start int) (int, int, bool) {
	if start >= len(data) || data[start] != '|' {
		return 0, 0, false
	}
	nl := bytes.IndexByte(data[start:], '\n')
	if nl < 0 {
		return 0, 0, false
	}
	end, indent := 0, -1
	for off := start + nl + 1; off < len(data); {
		line, _, _ := bytes.Cut(data[off:], []byte("\n"))
		body := bytes.TrimLeft(line, " ")
		if len(bytes.TrimSpace(line)) > 0 {
			depth := len(line) - len(body)
			if indent < 0 {
				indent = depth
			}
			if depth < indent {
				break
			}
			end = off + len(bytes.TrimRight(line, " \t\r"))
		}
		off += len(line) + 1
	}
	return start, end, end > 0
}

package keepstyle

import (
	"bytes"
	"encoding/json"
	"sort"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// form is how a file is laid out beyond what its node tree records: a re-encoded file must
// keep it, or every line of the file changes for a one-value edit.
type form struct {
	// crlf: every line ends in "\r\n". The file is edited with "\n" and written back with
	// "\r\n"; a file mixing both is edited as "\n" (its "\r"s are YAML line breaks too).
	crlf bool
	// finalNewline: the file ends with a line break (MicroShift has files without one).
	finalNewline bool
	// indent is the mapping indentation in spaces; seqIndent how far a block list's "-" sits
	// right of its key (0, indent-2 or indent: what the encoder can write).
	indent, seqIndent int
	// jsonIndent is set when the file is JSON (a YAML file written as JSON stays JSON): the
	// indentation unit of its lines, or "" when it is on one line.
	json       bool
	jsonIndent string
}

// formOf reads the form of a file; data has "\n" line ends (see toLF).
func formOf(data []byte, crlf bool) form {
	f := form{crlf: crlf, finalNewline: bytes.HasSuffix(data, []byte("\n")), indent: 2}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		f.json, f.jsonIndent = true, jsonIndentOf(trimmed)
		return f
	}
	docs, err := parse(data)
	if err != nil {
		return f
	}
	maps, seqs := map[int]int{}, map[int]int{}
	for _, d := range docs {
		indentSamples(d, maps, seqs)
	}
	if n, ok := mostCommon(maps); ok && n >= 2 && n <= 9 {
		f.indent = n
	}
	f.seqIndent = max(f.indent-2, 0) // the compact form when the file has no block list
	if n, ok := mostCommon(seqs); ok && (n == f.indent || n == f.indent-2 || n == 0) {
		f.seqIndent = n
	}
	return f
}

// indentSamples counts, for every block mapping value of a block mapping, how far right of
// its key it starts, and the same for block lists. Mappings that are list items are left
// out: their keys sit after "- ", and writers indent their values from the dash.
func indentSamples(n *kyaml.Node, maps, seqs map[int]int) {
	for _, c := range n.Content {
		if n.Kind == kyaml.SequenceNode && c.Kind == kyaml.MappingNode {
			for _, x := range c.Content {
				indentSamples(x, maps, seqs)
			}
			continue
		}
		indentSamples(c, maps, seqs)
	}
	if n.Kind == kyaml.MappingNode && n.Style&kyaml.FlowStyle == 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Line <= k.Line || len(v.Content) == 0 || v.Style&kyaml.FlowStyle != 0 {
				continue
			}
			switch v.Kind {
			case kyaml.MappingNode:
				maps[v.Content[0].Column-k.Column]++
			case kyaml.SequenceNode:
				seqs[v.Column-k.Column]++
			}
		}
	}
}

// mostCommon returns the most frequent sample, the smallest on a tie.
func mostCommon(samples map[int]int) (int, bool) {
	keys := make([]int, 0, len(samples))
	for k := range samples {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	best, count := 0, 0
	for _, k := range keys {
		if samples[k] > count {
			best, count = k, samples[k]
		}
	}
	return best, count > 0
}

// jsonIndentOf returns the leading whitespace of the first indented line of a JSON text.
func jsonIndentOf(data []byte) string {
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) < 2 {
		return ""
	}
	for _, l := range lines[1:] {
		if ws := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]; len(ws) > 0 {
			return string(ws)
		}
	}
	return ""
}

// toLF returns data with "\r\n" line ends turned into "\n" when every line has them.
func toLF(data []byte) ([]byte, bool) {
	n := bytes.Count(data, []byte("\n"))
	if n == 0 || bytes.Count(data, []byte("\r\n")) != n {
		return data, false
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), true
}

// finish gives encoded ("\n" line ends, a final newline) the file's line ends and ending.
func (f form) finish(encoded []byte) []byte {
	if !f.finalNewline {
		encoded = bytes.TrimSuffix(encoded, []byte("\n"))
	}
	if f.crlf {
		encoded = bytes.ReplaceAll(encoded, []byte("\n"), []byte("\r\n"))
	}
	return encoded
}

// encoder returns a YAML encoder writing in the file's indentation.
func (f form) encoder(buf *bytes.Buffer) *kyaml.Encoder {
	style := kyaml.CompactSequenceStyle
	if f.seqIndent == f.indent {
		style = kyaml.WideSequenceStyle
	}
	enc := kyaml.NewEncoderWithOptions(buf, &kyaml.EncoderOptions{SeqIndent: style})
	enc.SetIndent(f.indent) // compact lists then sit indent-2 right of their key
	return enc
}

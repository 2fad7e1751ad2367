package keepstyle

import (
	"bytes"
	"encoding/json"
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// encodeJSON writes an edited JSON file (one document) back as JSON: members in the node
// tree's order, indented by the file's unit as jq and json.dumps(indent=…) write it.
func encodeJSON(docs []*kyaml.Node, f form) ([]byte, error) {
	if len(docs) != 1 {
		return nil, fmt.Errorf("a JSON file holds one document, not %d", len(docs))
	}
	var compact bytes.Buffer
	if err := writeJSON(&compact, docs[0]); err != nil {
		return nil, err
	}
	if f.jsonIndent == "" {
		return append(compact.Bytes(), '\n'), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", f.jsonIndent); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *kyaml.Node) error {
	switch n.Kind {
	case kyaml.DocumentNode:
		return writeJSON(b, n.Content[0])
	case kyaml.AliasNode:
		return writeJSON(b, n.Alias)
	case kyaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			if n.Content[i].ShortTag() == "!!merge" {
				return fmt.Errorf("line %d: a merge key has no JSON form", n.Content[i].Line)
			}
			b.Write(jsonText(n.Content[i].Value))
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case kyaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return writeJSONScalar(b, n)
	}
	return nil
}

// writeJSONScalar writes a scalar as JSON: strings escaped as JSON, numbers as written when
// they are JSON numbers, anything else as the YAML decoder reads it.
func writeJSONScalar(b *bytes.Buffer, n *kyaml.Node) error {
	switch n.ShortTag() {
	case "!!str":
		b.Write(jsonText(n.Value))
		return nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			b.WriteString(n.Value)
			return nil
		}
	}
	v, err := value(n)
	if err != nil {
		return err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	b.Write(out)
	return nil
}

// jsonText is s as a JSON string, without the HTML escaping encoding/json defaults to
// (jq and Python write "<", ">" and "&" as they are).
func jsonText(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

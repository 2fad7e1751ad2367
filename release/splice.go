package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
)

// span is where one member of "images" sits in the file: lead is the whitespace before its
// key, sep what lies between key and value (": "), and the value's byte range.
type span struct {
	key              string
	lead, sep        []byte
	valStart, valEnd int
}

// imagesLayout is the byte layout of the "images" object: after its "{", its members, and
// the whitespace before its "}"; key is the "images" member itself (its lead and separator
// give the layout of members added to an empty object).
type imagesLayout struct {
	open, close int
	members     []span
	key         span
}

// splice writes images into data by editing only the "images" object's interior: every
// member keeps its own lead whitespace and separator, new members copy the last member's,
// and everything outside "images" (indentation, key order, line endings, release.base)
// stays byte for byte. It reports false when the layout cannot be read or "images" is empty,
// and the caller then re-encodes.
func splice(data []byte, images []releasefile.Member) ([]byte, bool) {
	lay, err := layoutOf(data)
	if err != nil {
		return nil, false
	}
	if len(lay.members) == 0 {
		return spliceEmpty(data, lay, images), true
	}
	byKey := map[string]span{}
	for _, m := range lay.members {
		byKey[m.key] = m
	}
	last := lay.members[len(lay.members)-1]
	var b bytes.Buffer
	b.Write(data[:lay.open])
	for i, m := range images {
		sp, ok := byKey[m.Key]
		if !ok {
			sp = span{lead: last.lead, sep: last.sep}
		}
		b.Write(sp.lead)
		b.Write(jsonString(m.Key))
		b.Write(sp.sep)
		b.Write(m.Value)
		if i < len(images)-1 {
			b.WriteByte(',')
		}
	}
	b.Write(data[last.valEnd:lay.close])
	b.Write(data[lay.close:])
	return b.Bytes(), true
}

// spliceEmpty fills an empty "images" object: members go one level deeper than the
// "images" key, on lines of their own when the key has one (same line ends and indentation
// unit), the closing brace back at the key's indentation.
func spliceEmpty(data []byte, lay *imagesLayout, images []releasefile.Member) []byte {
	if len(images) == 0 {
		return data
	}
	lead := lay.key.lead
	unit := lead[bytes.LastIndexByte(lead, '\n')+1:]
	var b bytes.Buffer
	b.Write(data[:lay.open])
	for i, m := range images {
		b.Write(lead)
		b.Write(unit)
		b.Write(jsonString(m.Key))
		b.Write(lay.key.sep)
		b.Write(m.Value)
		if i < len(images)-1 {
			b.WriteByte(',')
		}
	}
	b.Write(lead)
	b.Write(data[lay.close:])
	return b.Bytes()
}

// layoutOf finds the byte layout of the top-level "images" object.
func layoutOf(data []byte) (*imagesLayout, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	prev := int(dec.InputOffset())
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if tok != "images" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			prev = int(dec.InputOffset())
			continue
		}
		keyEnd := int(dec.InputOffset())
		lead, ok := leadOf(data, prev, keyEnd)
		if !ok {
			return nil, io.ErrUnexpectedEOF
		}
		lay, err := membersOf(data, dec)
		if err != nil {
			return nil, err
		}
		lay.key = span{key: "images", lead: lead, sep: bytes.TrimSuffix(data[keyEnd:lay.open], []byte("{"))}
		return lay, nil
	}
	return nil, errors.New("no images object")
}

// leadOf returns the whitespace between the end of the previous member (or the object's
// "{", at prev) and the key ending at keyEnd; it reports false when anything else lies there.
func leadOf(data []byte, prev, keyEnd int) ([]byte, bool) {
	keyStart := bytes.LastIndexByte(data[:keyEnd-1], '"')
	for keyStart > 0 && data[keyStart-1] == '\\' { // an escaped quote inside the key
		keyStart = bytes.LastIndexByte(data[:keyStart-1], '"')
	}
	if keyStart < prev {
		return nil, false
	}
	gap := data[prev:keyStart]
	if i := bytes.IndexByte(gap, ','); i >= 0 {
		gap = gap[i+1:]
	}
	return gap, isSpace(gap)
}

func membersOf(data []byte, dec *json.Decoder) (*imagesLayout, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("images: not an object")
	}
	lay := &imagesLayout{open: int(dec.InputOffset())}
	prev := lay.open // just after "{" or after the previous value
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keyEnd := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		gap, ok := leadOf(data, prev, keyEnd)
		if !ok {
			return nil, io.ErrUnexpectedEOF
		}
		key, _ := tok.(string)
		lay.members = append(lay.members, span{key: key, lead: gap, sep: data[keyEnd:start], valStart: start, valEnd: end})
		prev = end
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	lay.close = int(dec.InputOffset()) - 1
	return lay, nil
}

func isSpace(b []byte) bool {
	return len(bytes.TrimSpace(b)) == 0
}

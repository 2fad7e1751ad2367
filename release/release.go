// Package release reads and updates MicroShift's assets/release/release-<arch>.json: the
// OpenShift payload version (release.base) and the flat map of images MicroShift runs
// (images). Updates touch only the storage keys of an era and keep everything else — key
// order, other keys, the 2-space indented layout with a trailing newline — so a rebase
// produces minimal diffs (MicroShift's jq/yq writers rewrote whole files).
package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// FileName is the release file of a MicroShift architecture (x86_64, aarch64).
func FileName(arch string) string {
	return "release-" + arch + ".json"
}

// member is one key of a JSON object with its raw value, in file order.
type member struct {
	key   string
	value json.RawMessage
}

// File is a parsed release file.
type File struct {
	// Base is release.base, the OpenShift payload version.
	Base string
	// Keys are the images keys in file order.
	Keys []string
	// Images maps each key to its pull spec, keys as in the file.
	Images map[string]string

	top    []member
	images []member
}

// Change lists the storage keys a Merge added, updated and removed, each in file order.
type Change struct {
	Added   []string
	Updated []string
	Removed []string
}

// Empty reports whether Merge left the images unchanged.
func (c *Change) Empty() bool {
	return len(c.Added)+len(c.Updated)+len(c.Removed) == 0
}

// Read parses a release file. It requires a top-level object with a "release" object holding
// a string "base" and an "images" object of strings, with no duplicate keys.
func Read(data []byte) (*File, error) {
	top, err := readObject(data, "top level")
	if err != nil {
		return nil, err
	}
	f := &File{top: top, Images: map[string]string{}}
	var haveRelease, haveImages bool
	for _, m := range top {
		switch m.key {
		case "release":
			haveRelease = true
			var r struct {
				Base *string `json:"base"`
			}
			if err := json.Unmarshal(m.value, &r); err != nil {
				return nil, fmt.Errorf("field release: expected an object with a string base: %w", err)
			}
			if r.Base == nil {
				return nil, fmt.Errorf("field release.base is missing")
			}
			f.Base = *r.Base
		case "images":
			haveImages = true
			f.images, err = readObject(m.value, "images")
			if err != nil {
				return nil, err
			}
			for _, im := range f.images {
				var s string
				if err := json.Unmarshal(im.value, &s); err != nil {
					return nil, fmt.Errorf("field images.%s: expected a string: %w", im.key, err)
				}
				f.Keys = append(f.Keys, im.key)
				f.Images[im.key] = s
			}
		}
	}
	if !haveRelease {
		return nil, fmt.Errorf("field release is missing")
	}
	if !haveImages {
		return nil, fmt.Errorf("field images is missing")
	}
	return f, nil
}

// readObject decodes a JSON object into its members in order, rejecting duplicates and
// trailing data.
func readObject(data []byte, what string) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("decoding %s: expected an object, found %v", what, tok)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", what, err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("decoding %s: duplicate key %q", what, key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("decoding %s.%s: %w", what, key, err)
		}
		out = append(out, member{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decoding %s: unexpected data after the object", what)
	}
	return out, nil
}

// Merge sets exactly the era's release keys to images (key → pull spec, keys as
// era.ReleaseKeys returns them): existing keys are updated in place, missing ones appended at
// the end of "images", and every other era.StorageKeys entry is removed. Keys outside
// era.StorageKeys and release.base are never touched. The output is 2-space indented with a
// trailing newline, MicroShift's layout; a file already in that layout changes only where
// keys changed.
func Merge(data []byte, e era.Era, images map[string]string) ([]byte, *Change, error) {
	return MergeWith(data, e, images, MergeOptions{})
}

// MergeOptions widen Merge to bundle images the era table does not declare.
type MergeOptions struct {
	// Extra are release keys written besides the era's, in this order (relatedImages the era
	// does not know, under keys derived by era.DerivedKey).
	Extra []string
	// Retired are keys an earlier run wrote that are storage keys too: removed unless wanted.
	Retired []string
}

// MergeWith is Merge with extra wanted keys and extra storage keys to retire.
func MergeWith(data []byte, e era.Era, images map[string]string, opts MergeOptions) ([]byte, *Change, error) {
	f, err := Read(data)
	if err != nil {
		return nil, nil, err
	}
	want := append(e.ReleaseKeys(), opts.Extra...)
	wanted := map[string]bool{}
	var missing []string
	for _, k := range want {
		wanted[k] = true
		if images[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("era %s: no image given for release key(s) %s", e.Name, strings.Join(missing, ", "))
	}
	var extra []string
	for k := range images {
		if !wanted[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, nil, fmt.Errorf("era %s: image key(s) %s are not release keys of the era (%s)", e.Name, strings.Join(extra, ", "), strings.Join(want, ", "))
	}
	storage := map[string]bool{}
	for _, k := range append(append([]string{}, era.StorageKeys...), opts.Retired...) {
		storage[k] = true
	}

	ch := &Change{}
	var out []member
	present := map[string]bool{}
	for _, m := range f.images {
		switch {
		case wanted[m.key]:
			present[m.key] = true
			if f.Images[m.key] != images[m.key] {
				ch.Updated = append(ch.Updated, m.key)
				m.value = jsonString(images[m.key])
			}
			out = append(out, m)
		case storage[m.key]:
			ch.Removed = append(ch.Removed, m.key)
		default:
			out = append(out, m)
		}
	}
	for _, k := range want {
		if !present[k] {
			ch.Added = append(ch.Added, k)
			out = append(out, member{k, jsonString(images[k])})
		}
	}
	// Only the images object is edited, in the file's own layout; a file whose layout cannot
	// be followed (or whose images are empty) is written in MicroShift's.
	if res, ok := splice(data, out); ok {
		return res, ch, nil
	}
	f.images = out
	res, err := f.encode()
	if err != nil {
		return nil, nil, err
	}
	return res, ch, nil
}

func jsonString(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// encode writes the file with 2-space indentation; raw values of untouched keys are only
// re-indented, never re-encoded, so their content stays byte for byte.
func (f *File) encode() ([]byte, error) {
	var buf bytes.Buffer
	err := writeObject(&buf, f.top, "", func(buf *bytes.Buffer, m member) error {
		if m.key == "images" {
			return writeObject(buf, f.images, "  ", reindent("    "))
		}
		return reindent("  ")(buf, m)
	})
	if err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeObject(buf *bytes.Buffer, members []member, indent string, value func(*bytes.Buffer, member) error) error {
	if len(members) == 0 {
		buf.WriteString("{}")
		return nil
	}
	buf.WriteString("{\n")
	for i, m := range members {
		buf.WriteString(indent + "  ")
		buf.Write(jsonString(m.key))
		buf.WriteString(": ")
		if err := value(buf, m); err != nil {
			return err
		}
		if i < len(members)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString(indent + "}")
	return nil
}

func reindent(prefix string) func(*bytes.Buffer, member) error {
	return func(buf *bytes.Buffer, m member) error {
		if err := json.Indent(buf, m.value, prefix, "  "); err != nil {
			return fmt.Errorf("encoding %s: %w", m.key, err)
		}
		return nil
	}
}

// Images reads release-<arch>.json at the root of fsys (MicroShift's assets/release
// directory) and returns release.base and the images with '-' replaced by '_' in every key,
// as MicroShift's pkg/release does for templates. A missing file is an error: MicroShift
// silently returned an empty map, which only failed later at template rendering.
func Images(fsys fs.FS, arch string) (string, map[string]string, error) {
	if arch == "" || strings.ContainsAny(arch, `/\.`) {
		return "", nil, fmt.Errorf("release images: architecture %q: expected a MicroShift arch such as x86_64 or aarch64", arch)
	}
	name := FileName(arch)
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", nil, fmt.Errorf("reading release file %s for arch %s: %w", name, arch, err)
	}
	f, err := Read(data)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make(map[string]string, len(f.Images))
	for _, k := range f.Keys {
		tk := era.TemplateKey(k)
		if prev, ok := out[tk]; ok && prev != f.Images[k] {
			return "", nil, fmt.Errorf("%s: keys differing only in '-'/'_' map to %s with different images", name, tk)
		}
		out[tk] = f.Images[k]
	}
	return f.Base, out, nil
}

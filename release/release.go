// Package release reads and updates MicroShift's assets/release/release-<arch>.json: the
// OpenShift payload version (release.base) and the flat map of images MicroShift runs
// (images). Updates touch only the storage keys of an era and keep everything else — key
// order, other keys, the 2-space indented layout with a trailing newline — so a rebase
// produces minimal diffs (MicroShift's jq/yq writers rewrote whole files).
package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// File is a parsed release file (read by the applier's releasefile package, the one home of
// how release-<arch>.json is read and named).
type File = releasefile.File

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

// Read parses a release file strictly (releasefile.Parse): a top-level object with a
// "release" object holding a string "base" and an "images" object of strings, with no
// duplicate keys.
func Read(data []byte) (*File, error) { return releasefile.Parse(data) }

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
	var out []releasefile.Member
	present := map[string]bool{}
	for _, m := range f.ImageMembers {
		switch {
		case wanted[m.Key]:
			present[m.Key] = true
			if f.Images[m.Key] != images[m.Key] {
				ch.Updated = append(ch.Updated, m.Key)
				m.Value = jsonString(images[m.Key])
			}
			out = append(out, m)
		case storage[m.Key]:
			ch.Removed = append(ch.Removed, m.Key)
		default:
			out = append(out, m)
		}
	}
	for _, k := range want {
		if !present[k] {
			ch.Added = append(ch.Added, k)
			out = append(out, releasefile.Member{Key: k, Value: jsonString(images[k])})
		}
	}
	// Only the images object is edited, in the file's own layout; a file whose layout cannot
	// be followed (or whose images are empty) is written in MicroShift's.
	if res, ok := splice(data, out); ok {
		return res, ch, nil
	}
	res, err := encode(f.Top, out)
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

// encode writes the top-level members, with images in place of "images", with 2-space
// indentation; raw values of untouched keys are only re-indented, never re-encoded, so their
// content stays byte for byte.
func encode(top, images []releasefile.Member) ([]byte, error) {
	var buf bytes.Buffer
	err := writeObject(&buf, top, "", func(buf *bytes.Buffer, m releasefile.Member) error {
		if m.Key == "images" {
			return writeObject(buf, images, "  ", reindent("    "))
		}
		return reindent("  ")(buf, m)
	})
	if err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeObject(buf *bytes.Buffer, members []releasefile.Member, indent string, value func(*bytes.Buffer, releasefile.Member) error) error {
	if len(members) == 0 {
		buf.WriteString("{}")
		return nil
	}
	buf.WriteString("{\n")
	for i, m := range members {
		buf.WriteString(indent + "  ")
		buf.Write(jsonString(m.Key))
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

func reindent(prefix string) func(*bytes.Buffer, releasefile.Member) error {
	return func(buf *bytes.Buffer, m releasefile.Member) error {
		if err := json.Indent(buf, m.Value, prefix, "  "); err != nil {
			return fmt.Errorf("encoding %s: %w", m.Key, err)
		}
		return nil
	}
}

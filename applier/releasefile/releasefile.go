// Package releasefile is the one home, for the applier and lvms-rebase alike, of MicroShift's
// assets/release/release-<arch>.json: where it lives, how it is read, and how its image keys
// become template keys. The file is a JSON object with "release": {"base": <OpenShift
// version>} and "images": {<key>: <pull spec>}; the assets' templates name an image as
// {{ .ReleaseImage.<key> }} with every '-' of the key replaced by '_' (TemplateKey), as
// MicroShift's pkg/release does.
package releasefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/readfile"
)

// Dir is the release files' directory under MicroShift's assets directory; RepoDir is the
// same directory in a MicroShift checkout, slash-separated.
const (
	Dir     = "release"
	RepoDir = "assets/" + Dir
)

// FileName is the release file of a MicroShift architecture (x86_64, aarch64).
func FileName(arch string) string { return "release-" + arch + ".json" }

// MaxFileSize caps a release file Read reads; MicroShift's are a few kilobytes.
const MaxFileSize = 1 << 20

// RepoPath is the release file of arch in a MicroShift checkout, slash-separated.
func RepoPath(arch string) string { return path.Join(RepoDir, FileName(arch)) }

// ArchOf returns the architecture whose RepoPath p is; false when p is no release file.
func ArchOf(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, RepoDir+"/release-")
	if !ok {
		return "", false
	}
	arch, ok := strings.CutSuffix(rest, ".json")
	if !ok || arch == "" || strings.Contains(arch, "/") {
		return "", false
	}
	return arch, true
}

// TemplateKey is the name templates use for an image key: '-' replaced by '_'.
func TemplateKey(key string) string { return strings.ReplaceAll(key, "-", "_") }

// TemplateField is the template parameter holding the images under their template keys.
const TemplateField = "ReleaseImage"

// Placeholder is how an asset names the image of key: {{ .ReleaseImage.<TemplateKey(key)> }}.
func Placeholder(key string) string { return "{{ ." + TemplateField + "." + TemplateKey(key) + " }}" }

// Member is one key of a JSON object with its raw value, in file order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// File is a parsed release file.
type File struct {
	// Base is release.base, the OpenShift payload version.
	Base string
	// Keys are the images keys in file order.
	Keys []string
	// Images maps each key to its pull spec, keys as in the file.
	Images map[string]string
	// Top and ImageMembers are the top-level and "images" members with their raw values, in
	// file order, for a writer that changes only some images and keeps the rest byte for byte.
	Top, ImageMembers []Member
}

// Parse reads a release file strictly: a top-level object with a "release" object holding a
// string "base" and an "images" object of strings, no duplicate keys, nothing after the object.
// Other top-level keys are kept (Top) but not interpreted.
func Parse(data []byte) (*File, error) {
	top, err := readObject(data, "top level")
	if err != nil {
		return nil, err
	}
	f := &File{Top: top, Images: map[string]string{}}
	var haveRelease, haveImages bool
	for _, m := range top {
		switch m.Key {
		case "release":
			haveRelease = true
			if f.Base, err = parseBase(m.Value); err != nil {
				return nil, err
			}
		case "images":
			haveImages = true
			if err := f.parseImages(m.Value); err != nil {
				return nil, err
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

func parseBase(raw json.RawMessage) (string, error) {
	var r struct {
		Base *string `json:"base"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("field release: expected an object with a string base: %w", err)
	}
	if r.Base == nil {
		return "", fmt.Errorf("field release.base is missing")
	}
	return *r.Base, nil
}

func (f *File) parseImages(raw json.RawMessage) error {
	var err error
	if f.ImageMembers, err = readObject(raw, "images"); err != nil {
		return err
	}
	for _, im := range f.ImageMembers {
		var s string
		if err := json.Unmarshal(im.Value, &s); err != nil {
			return fmt.Errorf("field images.%s: expected a string: %w", im.Key, err)
		}
		f.Keys = append(f.Keys, im.Key)
		f.Images[im.Key] = s
	}
	return nil
}

// readObject decodes a JSON object into its members in order, rejecting duplicates and
// trailing data.
func readObject(data []byte, what string) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("decoding %s: expected an object, found %v", what, tok)
	}
	var out []Member
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
		out = append(out, Member{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decoding %s: unexpected data after the object", what)
	}
	return out, nil
}

// Read parses FileName(arch) at the root of fsys (a MicroShift assets/release directory).
// arch must be a plain architecture name; errors name the file. A missing file is an error:
// MicroShift silently used no images, which only failed later at template rendering.
func Read(fsys fs.FS, arch string) (*File, error) {
	if arch == "" || strings.ContainsAny(arch, `/\.`) {
		return nil, fmt.Errorf("release images: architecture %q: expected a MicroShift arch such as x86_64 or aarch64", arch)
	}
	name := FileName(arch)
	data, err := readfile.FS(fsys, name, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading release file %s for arch %s: %w", name, arch, err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// TemplateImages returns the images under their template keys (TemplateKey), what the assets'
// templates receive as .ReleaseImage. Two keys that differ only in '-'/'_' and name different
// images are an error, as is a file without images.
func (f *File) TemplateImages() (map[string]string, error) {
	if len(f.Keys) == 0 {
		return nil, fmt.Errorf("images: expected a non-empty object of pull specs")
	}
	out := make(map[string]string, len(f.Keys))
	for _, k := range f.Keys {
		tk := TemplateKey(k)
		if prev, ok := out[tk]; ok && prev != f.Images[k] {
			return nil, fmt.Errorf("images keys differing only in '-'/'_' map to %s with different images", tk)
		}
		out[tk] = f.Images[k]
	}
	return out, nil
}

// Package output prints lvms-rebase's results as kubectl prints objects: -o json and -o yaml
// give one object carrying apiVersion and kind (docs/output.md), so scripts can tell what they
// read and which version of its schema. It is the one home of the API version and the kinds.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/yaml"
)

// APIVersion is the group and version of every machine-readable output (the group of the lock
// file, rebase/lock, too; `outdated` and `--branches` use this constant). Within v1alpha1 fields
// may be added; a field is renamed, removed or changes its unit only with a new version.
const APIVersion = "lvms-rebase.microshift.io/v1alpha1"

// The kinds of the objects the commands print.
const (
	KindRebaseResult = "RebaseResult"
	KindResolution   = "Resolution"
	KindApplyResult  = "ApplyResult"
	KindLvmdCheck    = "LvmdCheck"
	KindVersion      = "Version"
)

// The output formats of -o.
const (
	Text = "text"
	JSON = "json"
	YAML = "yaml"
)

// Formats lists the formats -o accepts, text (for people) first.
func Formats() []string { return []string{Text, JSON, YAML} }

// Check returns an error naming the accepted formats unless format is one of them.
func Check(format string) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("expected text, json or yaml, got %q", format)
	}
	return nil
}

// IsMachine reports whether format is a machine-readable one (json or yaml).
func IsMachine(format string) bool { return format == JSON || format == YAML }

// Write prints obj as an object of kind in format (json or yaml): apiVersion and kind first,
// then obj's own fields in their order (yaml sorts keys, as kubectl's yaml does). obj must
// encode as a JSON object. "<", ">" and "&" print as they are, not as \u003c….
func Write(w io.Writer, format, kind string, obj any) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return err
	}
	raw := bytes.TrimSpace(body.Bytes())
	if len(raw) < 2 || raw[0] != '{' {
		return fmt.Errorf("output: a %s must encode as a JSON object", kind)
	}
	head := fmt.Sprintf(`{"apiVersion":%q,"kind":%q`, APIVersion, kind)
	if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
		head += ","
	}
	doc := append([]byte(head), raw[1:]...)
	var out bytes.Buffer
	switch format {
	case JSON:
		if err := json.Indent(&out, doc, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
	case YAML:
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return err
		}
		out.Write(y)
	default:
		return fmt.Errorf("output: %q is not a machine-readable format (json or yaml)", format)
	}
	_, err := w.Write(out.Bytes())
	return err
}

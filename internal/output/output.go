// Package output prints lvms-rebase's results as kubectl prints objects: -o json and -o yaml
// give one document of api/v1alpha1 (docs/output.md), which carries apiVersion and kind so
// scripts can tell what they read and which version of its schema. It is the one home of the
// mapping from the library's results to those documents (convert.go): the library's structs
// are not the contract, so renaming one of their fields cannot change what a script reads.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
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

// Write prints doc in format (json or yaml): apiVersion and kind first, then the document's
// own fields in their order (yaml sorts keys, as kubectl's yaml does). "<", ">" and "&" print
// as they are, not as \u003c…. A document without this API's apiVersion and one of its kinds
// is refused: every document is made by this package's mapping.
func Write(w io.Writer, format string, doc v1alpha1.Document) error {
	if tm := doc.GetTypeMeta(); tm.APIVersion != v1alpha1.APIVersion || !slices.Contains(v1alpha1.Kinds(), tm.Kind) {
		return fmt.Errorf("output: %T is no %s document (apiVersion %q, kind %q)", doc, v1alpha1.APIVersion, tm.APIVersion, tm.Kind)
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	var out bytes.Buffer
	switch format {
	case JSON:
		if err := json.Indent(&out, bytes.TrimSpace(body.Bytes()), "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
	case YAML:
		y, err := yaml.JSONToYAML(body.Bytes())
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

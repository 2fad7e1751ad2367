// Package strictyaml decodes the files lvms-rebase owns (the lock file, the snapshot patches,
// IDMS/ICSP mirror files) strictly, the way the Kubernetes API machinery decodes strict
// YAML: duplicate keys are refused (sigs.k8s.io/yaml.YAMLToJSONStrict), and fields are
// matched case-sensitively with unknown and duplicate fields reported with their path
// (sigs.k8s.io/json.UnmarshalStrict), so a typo names where it is.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// UTF8 refuses data holding a byte that is not UTF-8, naming its line and value. YAML is
// UTF-8 (every YAML library in both modules, and PyYAML behind MicroShift's scripts, fails on
// anything else, most without a line), so a Latin-1 byte, even in a comment, is an error to
// fix rather than text to guess an encoding for or to drop.
func UTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("line %d: byte 0x%02x is not UTF-8 (YAML is UTF-8): save the file as UTF-8", bytes.Count(data[:i], []byte("\n"))+1, data[i])
		}
		i += n
	}
	return nil
}

// Unmarshal decodes YAML (or JSON) data into v strictly. Every unknown or duplicate field is
// reported, as `<path>: unknown field "<name>"`, joined into one error.
func Unmarshal(data []byte, v any) error {
	if err := UTF8(data); err != nil {
		return err
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return fmt.Errorf("error unmarshaling JSON: %w", err)
	}
	if len(strict) == 0 {
		return nil
	}
	errs := make([]error, 0, len(strict))
	for _, e := range strict {
		errs = append(errs, fieldError(e))
	}
	return errors.Join(errs...)
}

// UnmarshalJSON decodes JSON data (and nothing else: no YAML) into v as strictly as Unmarshal:
// unknown and duplicate fields are errors naming their path. For documents whose format is
// JSON by definition (containers-policy.json, signature payloads).
func UnmarshalJSON(data []byte, v any) error {
	strict, err := kjson.UnmarshalStrict(data, v)
	if err != nil {
		return err
	}
	errs := make([]error, 0, len(strict))
	for _, e := range strict {
		errs = append(errs, fieldError(e))
	}
	return errors.Join(errs...)
}

// fieldError rewrites the library's `unknown field "a.b[0].c"` as `a.b[0].c: unknown field
// "c"`: the path says where, the quoted name is what was written there.
func fieldError(e error) error {
	var fe interface{ FieldPath() string }
	if !errors.As(e, &fe) {
		return e
	}
	p := fe.FieldPath()
	kind, _, _ := strings.Cut(e.Error(), " \"")
	name := p[strings.LastIndexAny(p, ".]")+1:]
	return fmt.Errorf("%s: %s %q", p, kind, name)
}

// Package strictyaml decodes the files lvms-rebase owns (the lock file, the snapshot patches,
// IDMS/ICSP mirror files) strictly, the way the Kubernetes API machinery decodes strict
// YAML: duplicate keys are refused (sigs.k8s.io/yaml.YAMLToJSONStrict), and fields are
// matched case-sensitively with unknown and duplicate fields reported with their path
// (sigs.k8s.io/json.UnmarshalStrict), so a typo names where it is.
package strictyaml

import (
	"errors"
	"fmt"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Unmarshal decodes YAML (or JSON) data into v strictly. Every unknown or duplicate field is
// reported, as `<path>: unknown field "<name>"`, joined into one error.
func Unmarshal(data []byte, v any) error {
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

// Package jsonvalue is the one home, for the applier and lvms-rebase alike, of JSON-value
// normalisation: how typed API values become unstructured content and back
// (runtime.DefaultUnstructuredConverter, the API machinery's own conversion) without the nulls
// typed zero values leave, and how documents decoded with encoding/json get the number types
// unstructured objects hold, so objects from either path compare and render the same.
package jsonvalue

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// FromTyped converts a pointer to a typed API value (a Deployment spec, a webhook, a policy
// rule) into its unstructured form, with null fields dropped so that typed zero values such
// as metadata.creationTimestamp do not show up as stray `null`s.
func FromTyped(ptr any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", ptr, err)
	}
	PruneNulls(m)
	return m, nil
}

// ToTyped fills the typed value ptr points to from unstructured content; fields it does not
// know are ignored.
func ToTyped(content map[string]any, ptr any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, ptr)
}

// Normalize turns whole float64s (what encoding/json produces for every number) into int64,
// the integer type unstructured objects from the API machinery's decoders hold, in place.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = Normalize(val)
		}
	case []any:
		for i := range x {
			x[i] = Normalize(x[i])
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// PruneNulls deletes null-valued map entries at every depth: Kubernetes decoding treats a
// null field as absent, so two values that differ only by them mean the same.
func PruneNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == nil {
				delete(x, k)
				continue
			}
			PruneNulls(val)
		}
	case []any:
		for _, val := range x {
			PruneNulls(val)
		}
	}
}

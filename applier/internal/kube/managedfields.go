package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
)

// ownedContent returns the part of obj a managedFields entry owns (its FieldsV1 set), with the
// live values: what that manager last sent, as far as the fields are still its own. A field
// another writer changed since has moved to that writer's entry, so it is missing here. It
// reads the set without the API's schema: `f:` members of maps, `k:` keyed, `v:` set and `i:`
// indexed items of lists, and a member with no children is a leaf whose whole live value is
// taken (a scalar, or an atomic map or list such as a Deployment's selector).
//
// apiVersion, kind, metadata.name and metadata.namespace are never in a managedFields set (the
// API server strips them); the caller adds them.
func ownedContent(obj map[string]any, fieldsV1 []byte) (map[string]any, error) {
	var set map[string]any
	if err := json.Unmarshal(fieldsV1, &set); err != nil {
		return nil, fmt.Errorf("reading managedFields: %w", err)
	}
	out, err := extractOwned(obj, set, "")
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// extractOwned is ownedContent for one value: live at path, owned as set.
func extractOwned(live any, set map[string]any, path string) (any, error) {
	switch l := live.(type) {
	case map[string]any:
		return extractMap(l, set, path)
	case []any:
		return extractList(l, set, path)
	}
	if hasMembers(set) {
		return nil, fmt.Errorf("%s: managedFields name members of a %s", orTop(path), typeName(live))
	}
	return live, nil
}

func extractMap(live map[string]any, set map[string]any, path string) (any, error) {
	out := map[string]any{}
	for key, child := range set {
		if key == "." {
			continue
		}
		name, ok := strings.CutPrefix(key, "f:")
		if !ok {
			return nil, fmt.Errorf("%s: managedFields entry %q on a map", orTop(path), key)
		}
		lv, ok := live[name]
		if !ok {
			return nil, fmt.Errorf("%s: owned field is gone", orTop(path+"."+name))
		}
		cs, _ := child.(map[string]any)
		if !hasMembers(cs) {
			out[name] = lv
			continue
		}
		v, err := extractOwned(lv, cs, path+"."+name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// extractList keeps the owned items of a list in their live order.
func extractList(live []any, set map[string]any, path string) (any, error) {
	owned := make([]map[string]any, len(live)) // child set per live index; nil: not owned
	for key, child := range set {
		if key == "." {
			continue
		}
		i, err := findItem(live, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", orTop(path), err)
		}
		cs, _ := child.(map[string]any)
		if cs == nil {
			cs = map[string]any{}
		}
		owned[i] = cs
	}
	out := []any{}
	for i, cs := range owned {
		if cs == nil {
			continue
		}
		if !hasMembers(cs) {
			out = append(out, live[i])
			continue
		}
		v, err := extractOwned(live[i], cs, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// findItem locates the live list item a `k:`, `v:` or `i:` path element names.
func findItem(live []any, key string) (int, error) {
	kind, arg, _ := strings.Cut(key, ":")
	switch kind {
	case "k":
		var fields map[string]any
		if err := json.Unmarshal([]byte(arg), &fields); err != nil {
			return 0, fmt.Errorf("managedFields key %q: %w", key, err)
		}
		jsonvalue.Normalize(fields)
		for i, item := range live {
			if m, ok := item.(map[string]any); ok && keyMatches(m, fields) {
				return i, nil
			}
		}
	case "v":
		var want any
		if err := json.Unmarshal([]byte(arg), &want); err != nil {
			return 0, fmt.Errorf("managedFields value %q: %w", key, err)
		}
		want = jsonvalue.Normalize(want)
		for i, item := range live {
			if reflect.DeepEqual(jsonvalue.Normalize(item), want) {
				return i, nil
			}
		}
	case "i":
		if i, err := strconv.Atoi(arg); err == nil && i >= 0 && i < len(live) {
			return i, nil
		}
	default:
		return 0, fmt.Errorf("managedFields entry %q on a list", key)
	}
	return 0, fmt.Errorf("owned item %s is gone", key)
}

func keyMatches(item, fields map[string]any) bool {
	for k, v := range fields {
		if !reflect.DeepEqual(jsonvalue.Normalize(item[k]), v) {
			return false
		}
	}
	return true
}

// hasMembers reports whether a FieldsV1 set names anything below its own node.
func hasMembers(set map[string]any) bool {
	for k := range set {
		if k != "." {
			return true
		}
	}
	return false
}

func orTop(path string) string {
	if path == "" {
		return "object"
	}
	return strings.TrimPrefix(path, ".")
}

func typeName(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// boundedFields are, per kind, the fields whose every live value must be one MicroShift shipped
// before a legacy object is proven MicroShift's (proof 3, Candidate.Bounds): what grants access
// (rules, subjects, SCC users and capabilities, a ServiceAccount's secrets), what a workload runs
// as and mounts, where a webhook sends requests. library-go's resourceapply sets each of them
// whole on every start, so MicroShift's object holds one era's values and nothing else; an added
// rule, subject, container or volume, a changed verb or role, is someone else's. Fields the
// server defaults or a z-stream changes (images, probes, ports) are not bounded, nor are labels
// and annotations (library-go merges those); "x{}" bounds only the keys of map x (lvmd.yaml's
// value is the host's configuration) and "x[]" each element of list x.
var boundedFields = map[string][]string{
	"Role":               {"rules", "aggregationRule"},
	"ClusterRole":        {"rules", "aggregationRule"},
	"RoleBinding":        {"roleRef", "subjects"},
	"ClusterRoleBinding": {"roleRef", "subjects"},
	"ServiceAccount":     {"secrets", "imagePullSecrets", "automountServiceAccountToken"},
	"ConfigMap":          {"data{}", "binaryData{}"},
	"SecurityContextConstraints": {"users", "groups", "allowedCapabilities", "defaultAddCapabilities",
		"allowPrivilegedContainer", "allowHostNetwork", "allowHostPID", "allowHostIPC"},
	"Service":    {"spec.selector", "spec.externalName"},
	"Deployment": workloadBounds,
	"DaemonSet":  workloadBounds,
	"ValidatingWebhookConfiguration": {"webhooks[].name", "webhooks[].clientConfig.url",
		"webhooks[].clientConfig.service.name", "webhooks[].clientConfig.service.namespace"},
}

var workloadBounds = []string{
	"spec.selector", "spec.template.spec.serviceAccountName", "spec.template.spec.hostNetwork", "spec.template.spec.hostPID",
	"spec.template.spec.containers[].name", "spec.template.spec.initContainers[].name",
	"spec.template.spec.volumes[].name", "spec.template.spec.volumes[].hostPath.path",
}

// BoundedFields is obj cut down to the fields of its kind that bound a legacy object
// (boundedFields): what Candidate.Bounds records per era, and what the live object's must stay
// within. A kind without bounded fields gives an empty map.
func BoundedFields(obj map[string]any) map[string]any {
	kind, _ := obj["kind"].(string)
	out := map[string]any{}
	for _, p := range boundedFields[kind] {
		if v, ok := pick(obj, strings.Split(p, ".")); ok {
			out = merge(out, v).(map[string]any)
		}
	}
	return out
}

// HasBoundedFields reports whether kind has fields that bound a legacy object of it.
func HasBoundedFields(kind string) bool { return len(boundedFields[kind]) > 0 }

// pick returns the part of src on the path segs, as a tree of its own; false when src lacks it.
func pick(src any, segs []string) (any, bool) {
	if len(segs) == 0 {
		return src, true
	}
	m, ok := src.(map[string]any)
	if !ok {
		return nil, false
	}
	seg := segs[0]
	switch {
	case strings.HasSuffix(seg, "[]"):
		key := strings.TrimSuffix(seg, "[]")
		l, ok := m[key].([]any)
		if !ok {
			return nil, false
		}
		out := make([]any, len(l))
		for i, el := range l {
			v, ok := pick(el, segs[1:])
			if !ok {
				v = map[string]any{}
			}
			out[i] = v
		}
		return map[string]any{key: out}, true
	case strings.HasSuffix(seg, "{}"):
		key := strings.TrimSuffix(seg, "{}")
		keys, ok := m[key].(map[string]any)
		if !ok {
			return nil, false
		}
		out := map[string]any{}
		for k := range keys {
			out[k] = nil
		}
		return map[string]any{key: out}, true
	}
	v, ok := m[seg]
	if !ok {
		return nil, false
	}
	if v, ok = pick(v, segs[1:]); !ok {
		return nil, false
	}
	return map[string]any{seg: v}, true
}

// merge adds b's keys to a (lists of one source merge by index).
func merge(a, b any) any {
	switch bv := b.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok {
			return bv
		}
		for k, v := range bv {
			if av, ok := am[k]; ok {
				am[k] = merge(av, v)
			} else {
				am[k] = v
			}
		}
		return am
	case []any:
		al, ok := a.([]any)
		if !ok || len(al) != len(bv) {
			return bv
		}
		for i := range bv {
			al[i] = merge(al[i], bv[i])
		}
		return al
	}
	return b
}

// withinBounds reports whether live's bounded fields are within one of bounds (each what one
// era shipped); else the first live path outside the first bound, for the reason.
func withinBounds(live map[string]any, bounds []map[string]any) (string, bool) {
	got := BoundedFields(live)
	first := ""
	for i, b := range bounds {
		path, ok := within(got, b, "")
		if ok {
			return "", true
		}
		if i == 0 {
			first = path
		}
	}
	return first, false
}

// WithinBounds is withinBounds for the applier's tests, which hold every era's assets to the
// declared bounds with it.
func WithinBounds(obj map[string]any, bounds []map[string]any) (string, bool) {
	return withinBounds(obj, bounds)
}

// within reports whether live has nothing bound lacks: every map key of live in bound with a
// value within bound's (a nil bound value admits any), every element of a live list within some
// element of bound's, scalars equal. It returns the first live path outside bound.
func within(live, bound any, path string) (string, bool) {
	if bound == nil {
		return "", true
	}
	switch l := live.(type) {
	case map[string]any:
		b, ok := bound.(map[string]any)
		if !ok {
			return orTop(path), false
		}
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			bv, ok := b[k]
			if !ok {
				return orTop(path + "." + k), false
			}
			if p, ok := within(l[k], bv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		b, ok := bound.([]any)
		if !ok {
			return orTop(path), false
		}
		for i, el := range l {
			if !slices.ContainsFunc(b, func(bv any) bool { _, ok := within(el, bv, ""); return ok }) {
				return fmt.Sprintf("%s[%d]", orTop(path), i), false
			}
		}
		return "", true
	}
	if !contains(live, bound) {
		return orTop(path), false
	}
	return "", true
}

// ShippedBounds collects, for each of refs found in objs (every era's assets), the distinct
// bounded fields the eras ship it with, in a stable order: the era data Candidate.Bounds is
// made of.
func ShippedBounds(objs []*unstructured.Unstructured, refs []eras.ObjectRef) (map[string][]map[string]any, error) {
	out := map[string][]map[string]any{}
	seen := map[string]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		ref := eras.ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		if eras.ClusterScoped(ref.Kind) {
			ref.Namespace = ""
		}
		if !slices.ContainsFunc(refs, ref.SameObject) {
			continue
		}
		b := BoundedFields(u.Object)
		key, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		if id := ref.String() + " " + string(key); !seen[id] {
			seen[id] = true
			out[ref.String()] = append(out[ref.String()], b)
		}
	}
	for ref, bs := range out {
		slices.SortFunc(bs, func(a, b map[string]any) int {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return strings.Compare(string(ja), string(jb))
		})
		out[ref] = bs
	}
	return out, nil
}

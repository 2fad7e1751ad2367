// Package lvmd holds the mechanics behind the applier's lvmd types: the schema check that reports
// every mistyped or unknown field of an lvmd configuration by its full path, and the host's LVM
// listings (vgs, lvs) the defaults and the preflight check use.
package lvmd

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// kind is the JSON type a field of the lvmd configuration must have.
type kind int

const (
	kString kind = iota
	kBool
	kUint
	kFloat
	kStringList
	kObject
	kObjectList
)

var kindNames = map[kind]string{
	kString: "a string", kBool: "a boolean", kUint: "a non-negative integer", kFloat: "a number",
	kStringList: "a list of strings", kObject: "a mapping", kObjectList: "a list of mappings",
}

// field is one key of the lvmd schema; sub lists an object's (or list item's) fields.
type field struct {
	name string
	kind kind
	sub  []field
}

// lvmdSchema is TopoLVM's lvmd Config with its DeviceClass, ThinPoolConfig and
// LvcreateOptionClass, field for field (TestLvmdFieldsMatchTopoLVM pins it).
var lvmdSchema = []field{
	{name: "socket-name", kind: kString},
	{name: "device-classes", kind: kObjectList, sub: []field{
		{name: "name", kind: kString},
		{name: "volume-group", kind: kString},
		{name: "default", kind: kBool},
		{name: "spare-gb", kind: kUint},
		{name: "stripe", kind: kUint},
		{name: "stripe-size", kind: kString},
		{name: "lvcreate-options", kind: kStringList},
		{name: "type", kind: kString},
		{name: "thin-pool", kind: kObject, sub: []field{
			{name: "name", kind: kString},
			{name: "overprovision-ratio", kind: kFloat},
		}},
	}},
	{name: "lvcreate-option-classes", kind: kObjectList, sub: []field{
		{name: "name", kind: kString},
		{name: "options", kind: kStringList},
	}},
	{name: "lvm-command-prefix", kind: kStringList},
}

// Problem is one offending field of an lvmd configuration.
type Problem struct {
	// Field is the path, such as device-classes[1].spare-gb.
	Field string
	// Reason says what was expected.
	Reason string
}

// Check returns every mistyped value of v, the configuration decoded from JSON into a mapping,
// by its full path, then every unknown key with the keys allowed there; nil when it matches
// TopoLVM's lvmd Config. Fields are visited in schema order and unknown keys sorted, so the
// report is deterministic.
func Check(v map[string]any) []Problem {
	var out []Problem
	checkSchema("", v, lvmdSchema, &out)
	return out
}

// Fields lists the keys the schema allows under path (none: the top level; "device-classes",
// "thin-pool": a thin pool's), in TopoLVM's order; nil for a path the schema does not have.
func Fields(path ...string) []string {
	fields := lvmdSchema
	for _, p := range path {
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == p })
		if i < 0 {
			return nil
		}
		fields = fields[i].sub
	}
	var out []string
	for _, f := range fields {
		out = append(out, f.name)
	}
	return out
}

// checkSchema appends every mistyped value under v to out, by its full path
// (device-classes[1].spare-gb), which the JSON decoder's type errors cannot do (they drop the
// list index), then every key the schema does not have there, with the keys allowed. Fields are
// visited in schema order and unknown keys sorted, so the report is deterministic.
func checkSchema(path string, v any, fields []field, out *[]Problem) {
	m := v.(map[string]any)
	var allowed []string
	for _, f := range fields {
		allowed = append(allowed, f.name)
		if val, ok := m[f.name]; ok && val != nil {
			checkValue(path+f.name, val, f, out)
		}
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		*out = append(*out, Problem{Field: path + k, Reason: "unknown field (allowed: " + strings.Join(allowed, ", ") + ")"})
	}
}

func checkValue(path string, v any, f field, out *[]Problem) {
	wrong := Problem{Field: path, Reason: fmt.Sprintf("expected %s, got %s", kindNames[f.kind], TypeName(v))}
	ok := true
	switch f.kind {
	case kString:
		_, ok = v.(string)
	case kBool:
		_, ok = v.(bool)
	case kFloat:
		_, ok = v.(float64)
	case kUint:
		n, isNum := v.(float64)
		ok = isNum && n >= 0 && n == math.Trunc(n) && n <= math.MaxInt64
		if isNum && !ok {
			wrong.Reason = fmt.Sprintf("%v must be an integer >= 0", n)
		}
	case kStringList:
		ok = checkList(path, v, func(p string, item any) { checkValue(p, item, field{kind: kString}, out) })
	case kObject:
		if _, ok = v.(map[string]any); ok {
			checkSchema(path+".", v, f.sub, out)
		}
	case kObjectList:
		ok = checkList(path, v, func(p string, item any) {
			if item != nil { // a null entry is reported by validate with its index
				checkValue(p, item, field{kind: kObject, sub: f.sub}, out)
			}
		})
	}
	if !ok {
		*out = append(*out, wrong)
	}
}

// checkList calls item for every element of v, a list; false when v is not one.
func checkList(path string, v any, item func(string, any)) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for i, it := range list {
		item(fmt.Sprintf("%s[%d]", path, i), it)
	}
	return true
}

// TypeName describes v's JSON type (and a scalar's value) for error messages.
func TypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

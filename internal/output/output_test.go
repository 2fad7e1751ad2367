package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestWriteJSONAndYAMLCarryTheSameObject(t *testing.T) {
	obj := struct {
		B    string         `json:"b"`
		A    int            `json:"a"`
		HTML string         `json:"html"`
		M    map[string]int `json:"m"`
	}{"x", 1, "<a&b>", map[string]int{"z": 1, "y": 2}}
	var j, y bytes.Buffer
	if err := Write(&j, JSON, KindResolution, obj); err != nil {
		t.Fatal(err)
	}
	if err := Write(&y, YAML, KindResolution, obj); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.String(), "{\n  \"apiVersion\": \""+APIVersion+"\",\n  \"kind\": \"Resolution\",\n  \"b\": \"x\"") {
		t.Errorf("json does not start with apiVersion, kind, then the object's fields in order:\n%s", j.String())
	}
	if !strings.Contains(j.String(), `"<a&b>"`) {
		t.Errorf("json escapes HTML:\n%s", j.String())
	}
	var fromJSON, fromYAML map[string]any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
		t.Errorf("json and yaml differ (-json +yaml):\n%s", diff)
	}
	if fromJSON["apiVersion"] != APIVersion || fromJSON["kind"] != KindResolution || fromJSON["a"] != 1.0 {
		t.Errorf("parsed %v", fromJSON)
	}
}

func TestWriteEmptyObjectAndErrors(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, JSON, KindApplyResult, struct{}{}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil || len(m) != 2 {
		t.Errorf("empty object: %v %v\n%s", m, err, b.String())
	}
	for _, tc := range []struct {
		format string
		obj    any
	}{{JSON, []int{1}}, {"xml", struct{}{}}, {Text, struct{}{}}} {
		if err := Write(&b, tc.format, KindApplyResult, tc.obj); err == nil {
			t.Errorf("Write(%s, %T) succeeded", tc.format, tc.obj)
		}
	}
	for _, f := range Formats() {
		if Check(f) != nil {
			t.Errorf("Check(%q) failed", f)
		}
	}
	if err := Check("wide"); err == nil || !strings.Contains(err.Error(), "text, json or yaml") {
		t.Errorf("Check(wide) = %v", err)
	}
}

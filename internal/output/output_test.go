package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
)

func TestWriteJSONAndYAMLCarryTheSameObject(t *testing.T) {
	doc := &v1alpha1.LvmdCheck{TypeMeta: v1alpha1.Meta(v1alpha1.KindLvmdCheck), File: "<a&b>", Valid: true,
		DeviceClasses: []string{"z", "y"}, Problems: []v1alpha1.LvmdProblem{}}
	var j, y bytes.Buffer
	if err := Write(&j, JSON, doc); err != nil {
		t.Fatal(err)
	}
	if err := Write(&y, YAML, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.String(), "{\n  \"apiVersion\": \""+v1alpha1.APIVersion+"\",\n  \"kind\": \"LvmdCheck\",\n  \"file\": \"<a&b>\"") {
		t.Errorf("json does not start with apiVersion, kind, then the object's fields in order, or escapes HTML:\n%s", j.String())
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
	if fromJSON["apiVersion"] != v1alpha1.APIVersion || fromJSON["kind"] != v1alpha1.KindLvmdCheck || fromJSON["valid"] != true {
		t.Errorf("parsed %v", fromJSON)
	}
}

func TestFormats(t *testing.T) {
	var b bytes.Buffer
	for _, f := range []string{"xml", Text} {
		if err := Write(&b, f, Version(versionInfo())); err == nil || b.Len() > 0 {
			t.Errorf("Write(%s) = %v, printed %q", f, err, b.String())
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

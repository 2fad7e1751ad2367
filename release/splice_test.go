package release

import (
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// TestMergeKeepsIndentationAndOrder: a release JSON in another layout (4 spaces, tabs, a
// compact top level, CRLF) keeps it; only the changed values, removed members and added
// members differ, and key order is kept. An empty "images" object is filled in the file's
// layout too (line ends, indentation unit, no final newline).
func TestMergeKeepsIndentationAndOrder(t *testing.T) {
	e, err := era.For("4.18")
	if err != nil {
		t.Fatal(err)
	}
	d := func(c string) string { return "registry.example/x@sha256:" + strings.Repeat(c, 64) }
	imgs := map[string]string{"lvms_operator": d("a"), "csi-snapshot-controller": d("b")}
	for name, tc := range map[string]struct{ in, want string }{
		"four spaces": {
			in:   "{\n    \"release\": {\n        \"base\": \"4.18.0\"\n    },\n    \"images\": {\n        \"pod\": \"p\",\n        \"csi-snapshot-controller\": \"old\",\n        \"topolvm_csi\": \"gone\",\n        \"cli\": \"c\"\n    }\n}\n",
			want: "{\n    \"release\": {\n        \"base\": \"4.18.0\"\n    },\n    \"images\": {\n        \"pod\": \"p\",\n        \"csi-snapshot-controller\": \"" + d("b") + "\",\n        \"cli\": \"c\",\n        \"lvms_operator\": \"" + d("a") + "\"\n    }\n}\n",
		},
		"tabs, removed first member": {
			in:   "{\n\t\"images\": {\n\t\t\"topolvm_csi\": \"gone\",\n\t\t\"zz\": \"z\",\n\t\t\"csi-snapshot-controller\": \"" + d("b") + "\"\n\t},\n\t\"release\": {\"base\": \"4.18.0\"}\n}",
			want: "{\n\t\"images\": {\n\t\t\"zz\": \"z\",\n\t\t\"csi-snapshot-controller\": \"" + d("b") + "\",\n\t\t\"lvms_operator\": \"" + d("a") + "\"\n\t},\n\t\"release\": {\"base\": \"4.18.0\"}\n}",
		},
		"empty images, 4 spaces, CRLF, no final newline": {
			in:   "{\r\n    \"release\": {\r\n        \"base\": \"4.18.0\"\r\n    },\r\n    \"images\": {}\r\n}",
			want: "{\r\n    \"release\": {\r\n        \"base\": \"4.18.0\"\r\n    },\r\n    \"images\": {\r\n        \"lvms_operator\": \"" + d("a") + "\",\r\n        \"csi-snapshot-controller\": \"" + d("b") + "\"\r\n    }\r\n}",
		},
		"empty images, one line": {
			in:   "{\"images\":{},\"release\":{\"base\":\"4.18.0\"}}",
			want: "{\"images\":{\"lvms_operator\":\"" + d("a") + "\",\"csi-snapshot-controller\":\"" + d("b") + "\"},\"release\":{\"base\":\"4.18.0\"}}",
		},
		"CRLF": {
			in:   "{\r\n  \"release\": {\"base\": \"4.18.0\"},\r\n  \"images\": {\r\n    \"csi-snapshot-controller\": \"old\",\r\n    \"lvms_operator\": \"old\"\r\n  }\r\n}\r\n",
			want: "{\r\n  \"release\": {\"base\": \"4.18.0\"},\r\n  \"images\": {\r\n    \"csi-snapshot-controller\": \"" + d("b") + "\",\r\n    \"lvms_operator\": \"" + d("a") + "\"\r\n  }\r\n}\r\n",
		},
	} {
		got, _, err := Merge([]byte(tc.in), e, imgs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, tc.want)
		}
	}
}

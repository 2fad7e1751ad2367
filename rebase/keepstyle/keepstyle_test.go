package keepstyle

import (
	"bytes"
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name, current, want, expect string
	}{
		{
			name:    "same meaning keeps the bytes",
			current: "rules:\n  - apiGroups: [\"\"]\n    verbs: [get]\napiVersion: v1\nkind: Role\nmetadata:\n  creationTimestamp: null\n  name: x\n",
			want:    "apiVersion: v1\nkind: Role\nmetadata:\n  name: x\nrules:\n- apiGroups:\n  - \"\"\n  verbs:\n  - get\n",
			expect:  "rules:\n  - apiGroups: [\"\"]\n    verbs: [get]\napiVersion: v1\nkind: Role\nmetadata:\n  creationTimestamp: null\n  name: x\n",
		},
		{
			name:    "a changed value keeps order, flow lists, quotes and comments",
			current: "# header\nspec:\n  image: 'quay.io/a@sha256:1' # pinned\n  args: [--v=2]\napiVersion: v1\nkind: Pod\n",
			want:    "apiVersion: v1\nkind: Pod\nspec:\n  args:\n  - --v=2\n  image: quay.io/a@sha256:2\n",
			expect:  "# header\nspec:\n  image: 'quay.io/a@sha256:2' # pinned\n  args: [--v=2]\napiVersion: v1\nkind: Pod\n",
		},
		{
			name:    "indented block lists stay indented, new keys are appended, gone keys dropped",
			current: "kind: X\nlist:\n  - a\n  - b\nold: 1\n",
			want:    "kind: X\nlist:\n- a\n- c\nnew: true\n",
			expect:  "kind: X\nlist:\n  - a\n  - c\nnew: true\n",
		},
		{
			name:    "null-valued keys the new object lacks stay (same meaning, no noise)",
			current: "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  creationTimestamp: null\n  name: x\n  namespace: a\n",
			want:    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n  namespace: b\n",
			expect:  "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  creationTimestamp: null\n  name: x\n  namespace: b\n",
		},
		{
			name:    "items matched by name",
			current: "env:\n- name: A\n  value: \"1\"\n- name: B\n  value: \"2\"\n",
			want:    "env:\n- name: B\n  value: \"3\"\n- name: A\n  value: \"1\"\n",
			expect:  "env:\n- name: B\n  value: \"3\"\n- name: A\n  value: \"1\"\n",
		},
		{
			name:    "an item dropped from the middle leaves its neighbours as they were",
			current: "rules:\n  - {verbs: [get], x: 'a'}\n  - verbs: [list]\n  - verbs: [\"watch\"]\n",
			want:    "rules:\n- verbs: [get]\n  x: a\n- verbs: [watch]\n",
			expect:  "rules:\n  - {verbs: [get], x: 'a'}\n  - verbs: [\"watch\"]\n",
		},
		{
			name:    "multi-document file keeps its separators",
			current: "---\nkind: A\nx: 1\n---\nkind: B\ny: [1, 2]\n",
			want:    "kind: A\nx: 1\n---\nkind: B\ny:\n- 1\n- 3\n",
			expect:  "---\nkind: A\nx: 1\n---\nkind: B\ny: [1, 3]\n",
		},
		{
			name:    "document added: the wanted bytes",
			current: "kind: A\n",
			want:    "kind: A\n---\nkind: B\n",
			expect:  "kind: A\n---\nkind: B\n",
		},
		{
			name:    "long strings are not folded",
			current: "kind: A\nd: x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x\nv: 1\n",
			want:    "kind: A\nd: x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x\nv: 2\n",
			expect:  "kind: A\nd: x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x\nv: 2\n",
		},
		{
			name:    "an inserted rule takes its siblings' style, a changed rule keeps its node",
			current: "rules:\n  - apiGroups: [\"\"]\n    verbs: [\"get\"]\n  - apiGroups: [\"x\"]\n    resources: [\"volumesnapshots\"]\n    verbs: [\"create\", \"get\"]\n  - apiGroups: [\"z\"]\n    verbs: [\"get\"]\n",
			want:    "rules:\n- apiGroups: [\"\"]\n  verbs: [get]\n- apiGroups: [storage.k8s.io]\n  resources: [storageclasses]\n  verbs: [get]\n- apiGroups: [x]\n  resources: [volumesnapshots]\n  verbs: [get]\n- apiGroups: [z]\n  verbs: [get]\n",
			expect:  "rules:\n  - apiGroups: [\"\"]\n    verbs: [\"get\"]\n  - apiGroups: [\"storage.k8s.io\"]\n    resources: [\"storageclasses\"]\n    verbs: [\"get\"]\n  - apiGroups: [\"x\"]\n    resources: [\"volumesnapshots\"]\n    verbs: [\"get\"]\n  - apiGroups: [\"z\"]\n    verbs: [\"get\"]\n",
		},
		{
			name:    "a new group is not quoted like the empty core group",
			current: "rules:\n  - apiGroups:\n      - \"\"\n    resources:\n      - configmaps\n  - apiGroups:\n      - apps\n    resources:\n      - deployments\n",
			want:    "rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n- apiGroups: [apiextensions.k8s.io]\n  resources: [customresourcedefinitions]\n- apiGroups: [apps]\n  resources: [deployments, replicasets]\n",
			expect:  "rules:\n  - apiGroups:\n      - \"\"\n    resources:\n      - configmaps\n  - apiGroups:\n      - apiextensions.k8s.io\n    resources:\n      - customresourcedefinitions\n  - apiGroups:\n      - apps\n    resources:\n      - deployments\n      - replicasets\n",
		},
		{
			name:    "a new list item takes the quotes of its siblings",
			current: "verbs: [\"get\", \"list\"]\n",
			want:    "verbs: [get, list, watch]\n",
			expect:  "verbs: [\"get\", \"list\", \"watch\"]\n",
		},
		{
			name:    "no current file",
			current: "",
			want:    "kind: A\n",
			expect:  "kind: A\n",
		},
		{
			name:    "type change takes the new style",
			current: "kind: A\nport: '8080'\n",
			want:    "kind: A\nport: 8080\n",
			expect:  "kind: A\nport: 8080\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(Apply([]byte(tc.current), []byte(tc.want)))
			if got != tc.expect {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.expect)
			}
			if !Equal([]byte(got), []byte(tc.want)) {
				t.Errorf("result does not mean what was wanted")
			}
		})
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{"a: 1\nb: null\n", "{\"a\": 1}", true},
		{"a: 1", "a: '1'", false},
		{"a: 1\n---\nb: 2\n", "a: 1\n", false},
		{"a: [", "a: 1", false},
	} {
		if got := Equal([]byte(tc.a), []byte(tc.b)); got != tc.eq {
			t.Errorf("Equal(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.eq)
		}
	}
}

// TestApplyKeepsWrappedScalars models CRDs written by yq/PyYAML: long descriptions wrapped
// at about 80 columns, plain and quoted. Unchanged ones keep their line breaks byte for byte
// when another value of the file changes.
func TestApplyKeepsWrappedScalars(t *testing.T) {
	const crd = "spec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n" +
		"          deletionPolicy:\n" +
		"            description: Determines whether a VolumeSnapshotContent created through the\n" +
		"              VolumeSnapshotClass should be deleted when its bound VolumeSnapshot is deleted.\n" +
		"            enum:\n            - Delete\n            - %s\n" +
		"          deviceClasses:\n" +
		"            description: \"DeviceClasses contains the configuration to assign the local\\\n" +
		"              \\ storage devices to the LVM volume groups.\\n\\nThat you can use.\"\n" +
		"          note:\n" +
		"            description: 'It is the ''default'' class. You can configure only a single\n" +
		"              default device class.'\n" +
		"          paragraphs:\n" +
		"            description: NodeSelector contains the configuration to choose the nodes on\n" +
		"              which you want to create the LVM volume group.\n\n" +
		"              If this field is not configured, all nodes are considered.\n" +
		"          size:\n            type: %s\n"
	current := fmt.Sprintf(crd, "Retain", "string")
	for _, tc := range []struct {
		name, enum, typ string
	}{
		{"a list item next to a wrapped value changes", "Recycle", "string"},
		{"a value after the wrapped ones changes", "Retain", "integer"},
		{"unchanged", "Retain", "string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := reencode(fmt.Sprintf(crd, tc.enum, tc.typ))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(want, []byte("the\n")) {
				t.Fatalf("the renderer wrapped a description, the test proves nothing:\n%s", want)
			}
			got := string(Apply([]byte(current), want))
			if expect := fmt.Sprintf(crd, tc.enum, tc.typ); got != expect {
				t.Errorf("got:\n%s\nwant:\n%s", got, expect)
			}
		})
	}
}

// reencode writes s the way a renderer does: one line per scalar, default styles.
func reencode(s string) ([]byte, error) {
	var v interface{}
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	return yaml.Marshal(v)
}

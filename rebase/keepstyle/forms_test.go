package keepstyle

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
)

// deployment is an object shaped like MicroShift's lvms-operator Deployment: nested mappings,
// block lists of scalars and of mappings, a templated image, labels repeated three times.
func deployment(image string, extraEnv bool) map[string]interface{} {
	labels := func(app string) map[string]interface{} {
		return map[string]interface{}{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "lvms-provisioner"}
	}
	env := []interface{}{
		map[string]interface{}{"name": "GOGC", "value": "120"},
		map[string]interface{}{"name": "GOMEMLIMIT", "value": "50MiB"},
	}
	if extraEnv {
		env = append(env, map[string]interface{}{"name": "GOMAXPROCS", "value": "2"})
	}
	return map[string]interface{}{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]interface{}{"name": "lvms-operator", "namespace": "openshift-storage", "labels": labels("lvms-operator")},
		"spec": map[string]interface{}{
			"replicas": 1,
			"selector": map[string]interface{}{"matchLabels": labels("lvms-operator")},
			"template": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": labels("lvms-operator")},
				"spec": map[string]interface{}{
					"containers": []interface{}{map[string]interface{}{
						"name":    "manager",
						"image":   image,
						"args":    []interface{}{"--health-probe-bind-address=:8081", "--leader-elect=false"},
						"command": []interface{}{"/lvms", "operator"},
						"env":     env,
						"ports":   []interface{}{map[string]interface{}{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"}},
						"resources": map[string]interface{}{
							"requests": map[string]interface{}{"cpu": "5m", "memory": "50Mi"},
						},
					}},
					"priorityClassName": "openshift-user-critical",
				},
			},
		},
	}
}

// fileForm is one way a checkout may write the file.
type fileForm struct {
	name string
	form fixtures.FileForm
}

// write writes obj in the form.
func (f fileForm) write(t *testing.T, obj interface{}) []byte {
	t.Helper()
	out, err := fixtures.Restyle(rendered(t, obj), f.form)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// labelUses are the selector's and the pod template's labels: equal to the Deployment's own.
var labelUses = []string{"spec.selector.matchLabels", "spec.template.metadata.labels"}

var fileForms = []fileForm{
	{"2 spaces, lists not indented", fixtures.FileForm{}},
	{"2 spaces, lists indented", fixtures.FileForm{IndentedLists: true}},
	{"4 spaces, lists indented", fixtures.FileForm{Indent: 4, IndentedLists: true}},
	{"4 spaces, lists indented by 2", fixtures.FileForm{Indent: 4}},
	{"CRLF", fixtures.FileForm{IndentedLists: true, CRLF: true}},
	{"no final newline", fixtures.FileForm{IndentedLists: true, NoFinalNewline: true}},
	{"CRLF, no final newline, 4 spaces", fixtures.FileForm{Indent: 4, IndentedLists: true, CRLF: true, NoFinalNewline: true}},
	{"pretty JSON, 2 spaces", fixtures.FileForm{JSONIndent: "  "}},
	{"pretty JSON, 4 spaces, CRLF", fixtures.FileForm{JSONIndent: "    ", CRLF: true}},
	{"pretty JSON, tabs, no final newline", fixtures.FileForm{JSONIndent: "\t", NoFinalNewline: true}},
	{"anchors and aliases", fixtures.FileForm{IndentedLists: true, Anchor: "metadata.labels", Aliases: labelUses}},
	{"anchors and aliases, 4 spaces, CRLF", fixtures.FileForm{Indent: 4, IndentedLists: true, CRLF: true, Anchor: "metadata.labels", Aliases: labelUses}},
}

// rendered is the file the renderer produces for obj (sorted keys, 2 spaces, LF).
func rendered(t *testing.T, obj interface{}) []byte {
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestApplyKeepsFileForms changes one value in a file of every form and counts the lines
// that differ: only the line carrying the value may change, and a second Apply changes
// nothing.
func TestApplyKeepsFileForms(t *testing.T) {
	const oldImage, newImage = "{{ .ReleaseImage.lvms_operator }}", "{{ .ReleaseImage.lvms_operator_v2 }}"
	for _, form := range fileForms {
		for _, ch := range []struct {
			name          string
			want          map[string]interface{}
			removed, adds int    // lines removed and added
			carries       string // every changed line holds this
		}{
			{"one value", deployment(newImage, false), 1, 1, "lvms_operator"},
			{"nothing", deployment(oldImage, false), 0, 0, ""},
		} {
			t.Run(form.name+"/"+ch.name, func(t *testing.T) {
				current := form.write(t, deployment(oldImage, false))
				want := rendered(t, ch.want)
				got := Apply(current, want)
				checkApplied(t, current, got, want)
				removed, added := lineDiff(string(current), string(got))
				if len(removed) != ch.removed || len(added) != ch.adds {
					t.Errorf("%d lines removed, %d added; want %d and %d\n-%s\n+%s\ngot:\n%s",
						len(removed), len(added), ch.removed, ch.adds, strings.Join(removed, "\n-"), strings.Join(added, "\n+"), got)
				}
				for _, l := range append(removed, added...) {
					if !strings.Contains(l, ch.carries) {
						t.Errorf("changed line %q does not carry the changed value", l)
					}
				}
			})
		}
	}
}

// TestApplyFormsStructural adds a list item and checks the new lines follow the file's
// form (an added item changes no other line; in JSON the previous item's "}" gains a comma).
func TestApplyFormsStructural(t *testing.T) {
	const image = "{{ .ReleaseImage.lvms_operator }}"
	for _, form := range fileForms {
		t.Run(form.name, func(t *testing.T) {
			current := form.write(t, deployment(image, false))
			want := rendered(t, deployment(image, true))
			got := Apply(current, want)
			checkApplied(t, current, got, want)
			// The expected bytes: the same form written for the new object.
			expect := form.write(t, deployment(image, true))
			if string(got) != string(expect) {
				removed, added := lineDiff(string(expect), string(got))
				t.Errorf("not written in the file's form; differs from it by\n-%s\n+%s", strings.Join(removed, "\n-"), strings.Join(added, "\n+"))
			}
		})
	}
}

// TestApplyAliases decides what a change under an anchor does. When every place the alias
// stands for wants the same new value, the anchor's definition is edited and the aliases
// stay (one line changes). When one place wants another value, only that alias is expanded
// into its own value: an alias says "the same as the anchor", which is no longer true there,
// and failing would stop an unattended rebase over a formatting choice when a correct,
// reviewable file exists.
func TestApplyAliases(t *testing.T) {
	const image = "{{ .ReleaseImage.lvms_operator }}"
	for _, form := range fileForms {
		if form.form.Anchor == "" {
			continue
		}
		t.Run(form.name+"/every use changes: the definition is edited", func(t *testing.T) {
			current := form.write(t, deployment(image, false))
			wantObj := deployment(image, false)
			for _, p := range [][]string{{"metadata"}, {"spec", "selector"}, {"spec", "template", "metadata"}} {
				labelsAt(wantObj, p)["app.kubernetes.io/part-of"] = "lvms"
			}
			got := Apply(current, rendered(t, wantObj))
			checkApplied(t, current, got, rendered(t, wantObj))
			removed, added := lineDiff(string(current), string(got))
			if len(removed) != 1 || len(added) != 1 || !strings.Contains(added[0], "part-of: lvms") {
				t.Errorf("-%s\n+%s", strings.Join(removed, "\n-"), strings.Join(added, "\n+"))
			}
			if c := strings.Count(string(got), "*labels"); c != 2 {
				t.Errorf("%d aliases left, want 2:\n%s", c, got)
			}
		})
		t.Run(form.name+"/one use changes: that alias alone is expanded", func(t *testing.T) {
			current := form.write(t, deployment(image, false))
			wantObj := deployment(image, false)
			labelsAt(wantObj, []string{"spec", "template", "metadata"})["app.kubernetes.io/version"] = "4.18.0"
			got := Apply(current, rendered(t, wantObj))
			checkApplied(t, current, got, rendered(t, wantObj))
			removed, added := lineDiff(string(current), string(got))
			if len(removed) != 1 || !strings.Contains(removed[0], "labels: *labels") || len(added) != 4 {
				t.Errorf("-%s\n+%s", strings.Join(removed, "\n-"), strings.Join(added, "\n+"))
			}
			if strings.Count(string(got), "*labels") != 1 || !strings.Contains(string(got), "&labels") {
				t.Errorf("the other alias or the anchor was lost:\n%s", got)
			}
		})
	}
}

func labelsAt(obj map[string]interface{}, path []string) map[string]interface{} {
	m := obj
	for _, p := range path {
		m = m[p].(map[string]interface{})
	}
	if l, ok := m["labels"]; ok {
		return l.(map[string]interface{})
	}
	return m["matchLabels"].(map[string]interface{})
}

// checkApplied holds what every Apply must: the result means what was wanted and applying
// the same again changes nothing.
func checkApplied(t *testing.T, current, got, want []byte) {
	t.Helper()
	if !Equal(got, want) {
		t.Fatalf("result does not mean what was wanted:\n%s", got)
	}
	if again := Apply(got, want); !bytes.Equal(again, got) {
		t.Errorf("a second Apply changed the file:\n%s", again)
	}
}

// lineDiff returns the lines of a missing from b and the lines of b new to a, by a longest
// common subsequence of whole lines (line endings included, so a lost CRLF counts).
func lineDiff(a, b string) (removed, added []string) {
	al, bl := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			i, j = i+1, j+1
		case j < len(bl) && (i == len(al) || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, fmt.Sprintf("%q", bl[j]))
			j++
		default:
			removed = append(removed, fmt.Sprintf("%q", al[i]))
			i++
		}
	}
	return removed, added
}

// TestApplyMergeKeys: merge keys stay while every key they give is still wanted (a changed
// given key is overridden explicitly); a given key that must go expands that merge only.
func TestApplyMergeKeys(t *testing.T) {
	const cur = "base: &b\n  a: 1\n  b: 2\nx:\n  <<: *b\n  c: 3\ny:\n  <<: *b\n"
	for _, tc := range []struct{ name, want, expect string }{
		{"own key changes", "base: {a: 1, b: 2}\nx: {a: 1, b: 2, c: 4}\ny: {a: 1, b: 2}\n",
			"base: &b\n  a: 1\n  b: 2\nx:\n  <<: *b\n  c: 4\ny:\n  <<: *b\n"},
		{"given key changes in one place", "base: {a: 1, b: 2}\nx: {a: 1, b: 5, c: 3}\ny: {a: 1, b: 2}\n",
			"base: &b\n  a: 1\n  b: 2\nx:\n  <<: *b\n  c: 3\n  b: 5\ny:\n  <<: *b\n"},
		{"given key goes in one place", "base: {a: 1, b: 2}\nx: {a: 1, c: 3}\ny: {a: 1, b: 2}\n",
			"base: &b\n  a: 1\n  b: 2\nx:\n  c: 3\n  a: 1\ny:\n  <<: *b\n"},
		{"given key changes everywhere", "base: {a: 1, b: 7}\nx: {a: 1, b: 7, c: 3}\ny: {a: 1, b: 7}\n",
			"base: &b\n  a: 1\n  b: 7\nx:\n  <<: *b\n  c: 3\ny:\n  <<: *b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Apply([]byte(cur), []byte(tc.want))
			if string(got) != tc.expect {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.expect)
			}
			checkApplied(t, []byte(cur), got, []byte(tc.want))
		})
	}
}

// TestApplyAliasBomb: a file of nested aliases that would expand to a billion nodes is
// neither expanded nor kept; the wanted bytes are written.
func TestApplyAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 'b'; i <= 'j'; i++ {
		fmt.Fprintf(&b, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("k: 1\n")
	want := []byte("j:\n- 1\nk: 2\n")
	if got := Apply([]byte(b.String()), want); !bytes.Equal(got, want) {
		t.Errorf("got %d bytes:\n%.300s", len(got), got)
	}
}

// TestApplyValuesOnly: when only values change, every other byte stays, also in forms the
// encoder cannot write (blank lines, aligned values, mixed line ends, PyYAML's "-   " lists,
// flow lists spread over lines, folded text); the value keeps its quotes.
func TestApplyValuesOnly(t *testing.T) {
	for _, tc := range []struct{ name, file, old, new string }{
		{"blank lines", "kind: Deployment\n\nspec:\n  replicas: 1\n\n  template:\n    image: %s\n\n", "a@sha256:1", "a@sha256:2"},
		{"aligned values and comments", "kind:     Service   # the kind\nspec:\n  port:   %s    # https\n  name:   x\n", "443", "8443"},
		{"mixed line ends", "kind: A\r\nspec:\n  image: '%s'\r\n  x: 1\n", "a:1", "a:2"},
		{"PyYAML indent=4 lists", "spec:\n    containers:\n    -   name: m\n        image: \"%s\"\n    -   name: other\n", "a:1", "a:2"},
		{"flow list over lines", "rules:\n  - verbs: [get,\n      list, %s]\n    x: >\n      folded\n      text\n", "watch", "patch"},
		{"document markers and a folded scalar", "---\nkind: A\ndesc: >-\n  some folded\n  text\nv: %s\n...\n", "1", "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current := fmt.Sprintf(tc.file, tc.old)
			expect := fmt.Sprintf(tc.file, tc.new)
			want, err := reencode(strings.ReplaceAll(expect, "\r", ""))
			if err != nil {
				t.Fatal(err)
			}
			got := Apply([]byte(current), want)
			if string(got) != expect {
				t.Errorf("got:\n%q\nwant:\n%q", got, expect)
			}
			checkApplied(t, []byte(current), got, want)
		})
	}
}

// TestApplyStructuralKeepsOtherLines: a change of shape (a key or item added or dropped) is
// encoded, and merged back into the original line by line, so blank lines, aligned values
// and mixed line ends elsewhere stay; where the change meets such a line (a conflict), the
// encoded file is used whole.
func TestApplyStructuralKeepsOtherLines(t *testing.T) {
	for _, tc := range []struct{ name, current, want, expect string }{
		{"blank lines, key added",
			"kind: Deployment\n\nmetadata:\n  name: x\n\nspec:\n  replicas: 1\n",
			"kind: Deployment\nmetadata: {name: x, labels: {a: b}}\nspec: {replicas: 1}\n",
			"kind: Deployment\n\nmetadata:\n  name: x\n  labels:\n    a: b\n\nspec:\n  replicas: 1\n"},
		{"aligned values, item dropped",
			"kind:   Role    # aligned\nrules:\n- verbs: [get]\n- verbs: [list]\nx:      1\n",
			"kind: Role\nrules: [{verbs: [get]}]\nx: 1\n",
			"kind:   Role    # aligned\nrules:\n- verbs: [get]\nx:      1\n"},
		{"mixed line ends, env added",
			"kind: A\r\nenv:\n- name: A\r\n  value: \"1\"\nz: 1\r\n",
			"kind: A\nenv: [{name: A, value: '1'}, {name: B, value: '2'}]\nz: 1\n",
			"kind: A\r\nenv:\n- name: A\r\n  value: \"1\"\n- name: B\n  value: \"2\"\nz: 1\r\n"},
		{"the change meets a line formatted otherwise: the file is encoded whole",
			"a:      1\n\nb: 2\n",
			"a: 5\nb: 2\nc: 3\n",
			"a: 5\nb: 2\nc: 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := reencode(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			got := Apply([]byte(tc.current), want)
			if string(got) != tc.expect {
				t.Errorf("got:\n%q\nwant:\n%q", got, tc.expect)
			}
			checkApplied(t, []byte(tc.current), got, want)
		})
	}
}

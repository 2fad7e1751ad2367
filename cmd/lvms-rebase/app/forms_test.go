package app

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
)

// formCase is one file of the tree rewritten in another form a checkout may have, and a
// hand edit of one value in it.
type formCase struct {
	path     string
	restyle  func(t *testing.T, data []byte) []byte
	from, to string // the hand edit: the first occurrence of from becomes to
}

// TestFileFormsKeptEndToEnd runs the rebase on a tree whose component and release files use
// the forms MicroShift's files may have (4-space indentation with indented or 2-indented
// lists, CRLF line ends, no final newline, pretty JSON in a .yaml file, anchors and aliases).
// The same objects in another form change nothing; a one-value hand edit in each file is
// undone by changing back exactly that line (the file is byte for byte its form again);
// a second run changes nothing.
func TestFileFormsKeptEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase four times")
	}
	lvms, snap := "assets/components/lvms/", "assets/components/csi-snapshot-controller/"
	podLabels := []string{"spec.template.metadata.labels"}
	cases := []formCase{
		{lvms + "lvms-operator_apps_v1_deployment.yaml", restyle(fixtures.FileForm{Indent: 4, IndentedLists: true}), "replicas: 1", "replicas: 2"},
		{lvms + "lvms-operator_rbac.authorization.k8s.io_v1_clusterrole.yaml", restyle(fixtures.FileForm{IndentedLists: true, CRLF: true}), "- configmaps", "- configmapz"},
		{lvms + "lvms_default-lvmcluster.yaml", restyle(fixtures.FileForm{NoFinalNewline: true}), "namespace: openshift-storage", "namespace: storage"},
		{lvms + "lvms-webhook-service_v1_service.yaml", restyle(fixtures.FileForm{JSONIndent: "    "}), `"protocol": "TCP"`, `"protocol": "UDP"`},
		{lvms + "vg-manager_rbac.authorization.k8s.io_v1_role.yaml", restyle(fixtures.FileForm{JSONIndent: "  ", CRLF: true}), `"get"`, `"got"`},
		{snap + "csi_controller_deployment.yaml", restyle(fixtures.FileForm{IndentedLists: true, CRLF: true, Anchor: "spec.selector.matchLabels", Aliases: podLabels}),
			"app: csi-snapshot-controller", "app: csi-snapshot"},
		{snap + "volumesnapshotclasses.yaml", restyle(fixtures.FileForm{Indent: 4, NoFinalNewline: true}), "type: string", "type: integer"},
		{"assets/release/release-x86_64.json", reindentJSON("    "), `"lvms_operator": "`, `"lvms_operator": "x`},
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	styled := map[string][]byte{}
	for _, c := range cases {
		data := readTree(t, dir)[c.path]
		if data == nil {
			t.Fatalf("%s: not written by the first run", c.path)
		}
		styled[c.path] = c.restyle(t, data)
		writeFile(t, dir, c.path, string(styled[c.path]))
	}

	// The same objects in other forms: nothing but the lock (file hashes) changes.
	res := e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	if c := planPaths(res, "change"); strings.Join(c, " ") != "scripts/auto-rebase/lvms-rebase.lock.yaml" {
		t.Errorf("re-run on the restyled tree changed %v, want only the lock", c)
	}
	checkForms(t, dir, styled, "after the re-run")

	// One value edited by hand in each file: the run changes back only that line.
	var edited []string
	for _, c := range cases {
		if !bytes.Contains(styled[c.path], []byte(c.from)) {
			t.Fatalf("%s: no %q to edit in:\n%s", c.path, c.from, styled[c.path])
		}
		writeFile(t, dir, c.path, strings.Replace(string(styled[c.path]), c.from, c.to, 1))
		edited = append(edited, c.path)
	}
	sort.Strings(edited)
	res = e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	if c := planPaths(res, "change"); strings.Join(c, " ") != strings.Join(edited, " ") {
		t.Errorf("after the hand edits: changed %v, want %v", c, edited)
	}
	checkForms(t, dir, styled, "after undoing the hand edits")

	// A second run changes nothing, and --check finds the tree as the lock says.
	res = e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	if c, a, r := planPaths(res, "change"), planPaths(res, "add"), planPaths(res, "remove"); len(c)+len(a)+len(r) > 0 {
		t.Errorf("second run: changed %v, added %v, removed %v", c, a, r)
	}
	if code, out, errOut := e.run(dir, "--check"); code != 0 {
		t.Errorf("--check: exit %d\n%s\n%s", code, out, errOut)
	}
}

// checkForms fails for every file that is not byte for byte its restyled form, showing the
// lines that differ.
func checkForms(t *testing.T, dir string, styled map[string][]byte, when string) {
	t.Helper()
	files := readTree(t, dir)
	for p, want := range styled {
		if got := files[p]; !bytes.Equal(got, want) {
			t.Errorf("%s %s: not in its form (-want +got, \\r shown):\n%s", p, when,
				cmp.Diff(strings.ReplaceAll(string(want), "\r", `\r`), strings.ReplaceAll(string(got), "\r", `\r`)))
		}
	}
}

// restyle writes a file in form f.
func restyle(f fixtures.FileForm) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		out, err := fixtures.Restyle(data, f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// reindentJSON re-indents a JSON file, keeping its key order, CRLF and no final newline.
func reindentJSON(indent string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		var out bytes.Buffer
		if err := json.Indent(&out, bytes.TrimSpace(data), "", indent); err != nil {
			t.Fatal(err)
		}
		return bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte("\r\n"))
	}
}

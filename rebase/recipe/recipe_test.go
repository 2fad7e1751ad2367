package recipe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A recipe pair shaped like MicroShift's: the OCP recipe with blank lines between entries,
// a compact list for the snapshot controller and `True` spellings; the LVMS recipe with group
// comments and ignored hand-maintained files.
const assetsYAML = `assets:
  - dir: components/openshift-dns/dns/
    src: cluster-dns-operator/pkg/manifests/assets/dns/
    files:
      - file: daemonset.yaml

  - dir: components/csi-snapshot-controller/
    no_clean: True
    src: cluster-csi-snapshot-controller-operator/assets
    files:
    - file: csi_controller_deployment.yaml
    - file: webhook_deployment.yaml
    - file: 05_operand_rbac.yaml
      src: ../manifests/
    - file: clusterrole.yaml
      ignore: "extracted automatically from 05_operand_rbac.yaml"

  - dir: release/
    ignore: "it contains files generated during rebase procedure"
    files:
      - file: release-x86_64.json
`

const lvmsYAML = `assets:

  - dir: components/lvms/
    src: lvms/amd64/
    no_clean: True
    files:
      # Version Config Map
      - file: topolvm-configmap_lvms-version.yaml
      # CRDs
      - file: topolvm.io_logicalvolumes.yaml
      # Webhook
      - file: lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml
      # Manual Namespace instead of OLM one
      - file: topolvm-openshift-storage_namespace.yaml
        ignore: "provided by MicroShift"
      - file: gone-long-ago.yaml
        ignore: "provided by MicroShift"
`

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, d := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReconcile(t *testing.T) {
	root := writeTree(t, map[string]string{
		"scripts/auto-rebase/assets.yaml":      assetsYAML,
		"scripts/auto-rebase/assets_lvms.yaml": lvmsYAML,
	})
	before := map[string][]string{
		"components/lvms":                    {"topolvm-configmap_lvms-version.yaml", "topolvm.io_logicalvolumes.yaml", "lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml", "topolvm-openshift-storage_namespace.yaml"},
		"components/csi-snapshot-controller": {"05_operand_rbac.yaml", "clusterrole.yaml", "csi_controller_deployment.yaml", "webhook_deployment.yaml"},
	}
	after := map[string][]string{
		"components/lvms":                    {"lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml", "subprovisioner_apps_v1_deployment.yaml", "topolvm-configmap_lvms-version.yaml", "topolvm-openshift-storage_namespace.yaml", "topolvm.io_logicalvolumes.yaml"},
		"components/csi-snapshot-controller": {"05_operand_rbac.yaml", "clusterrole.yaml", "csi_controller_deployment.yaml", "role.yaml"},
	}
	res, err := Reconcile(root, RecipeFiles, Components, before, after)
	if err != nil {
		t.Fatal(err)
	}
	wantAssets := strings.Replace(assetsYAML, "    - file: webhook_deployment.yaml\n", "", 1)
	wantAssets = strings.Replace(wantAssets, `      ignore: "extracted automatically from 05_operand_rbac.yaml"
`, `      ignore: "extracted automatically from 05_operand_rbac.yaml"
    - file: role.yaml
      ignore: "extracted automatically from 05_operand_rbac.yaml"
`, 1)
	wantLVMS := lvmsYAML + "      - file: subprovisioner_apps_v1_deployment.yaml\n"
	for p, want := range map[string]string{"scripts/auto-rebase/assets.yaml": wantAssets, "scripts/auto-rebase/assets_lvms.yaml": wantLVMS} {
		if got := string(res.Files[p]); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", p, got, want)
		}
	}
	if len(res.Changes) != 2 || res.Changes[1].Dropped[0] != "webhook_deployment.yaml" || res.Changes[0].Added[0] != "subprovisioner_apps_v1_deployment.yaml" {
		t.Errorf("changes: %+v", res.Changes)
	}

	// Once the tree has the new files and recipes, nothing changes and the invariant holds.
	files := map[string]string{
		"scripts/auto-rebase/assets.yaml":      wantAssets,
		"scripts/auto-rebase/assets_lvms.yaml": wantLVMS,
	}
	for dir, names := range after {
		for _, n := range names {
			files["assets/"+dir+"/"+n] = "kind: X\n"
		}
	}
	root2 := writeTree(t, files)
	res, err = Reconcile(root2, RecipeFiles, Components, after, after)
	if err != nil || len(res.Files) != 0 || len(res.Changes) != 0 {
		t.Errorf("second reconcile: %v, %d files, %+v", err, len(res.Files), res.Changes)
	}
	if err := Check(root2, RecipeFiles, Components); err != nil {
		t.Error(err)
	}
}

func TestCheck(t *testing.T) {
	root := writeTree(t, map[string]string{
		"scripts/auto-rebase/assets.yaml":                            assetsYAML,
		"scripts/auto-rebase/assets_lvms.yaml":                       lvmsYAML,
		"assets/components/lvms/topolvm.io_logicalvolumes.yaml":      "kind: X\n",
		"assets/components/lvms/stray.yaml":                          "kind: X\n",
		"assets/components/csi-snapshot-controller/clusterrole.yaml": "kind: X\n",
	})
	err := Check(root, RecipeFiles, Components)
	if err == nil {
		t.Fatal("Check passed on an inconsistent tree")
	}
	for _, want := range []string{
		"assets/components/lvms/stray.yaml is in no recipe",
		"assets/components/lvms/topolvm-configmap_lvms-version.yaml is listed but does not exist",
		"assets/components/csi-snapshot-controller/05_operand_rbac.yaml is listed but does not exist",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "gone-long-ago") || strings.Contains(err.Error(), "clusterrole.yaml is") {
		t.Errorf("ignored or existing entries reported:\n%v", err)
	}
}

// TestRecords: a tree keeps its own bundle record (its name, '#!' line and script path);
// only a tree without one gets the era's; a tree with both names gets both updated.
func TestRecords(t *testing.T) {
	const (
		oldRec = Dir + "/last_lvms_rebase.sh"
		newRec = Dir + "/last_rebase_lvms.sh"
		ref    = "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4-3"
	)
	known := []string{"last_rebase_lvms.sh", "last_lvms_rebase.sh"}
	newSpec := RecordSpec{Name: "last_rebase_lvms.sh", Script: "./scripts/auto-rebase/rebase_lvms.sh", Known: known}
	oldSpec := RecordSpec{Name: "last_lvms_rebase.sh", Script: "./scripts/auto-rebase/rebase-lvms.sh", Known: known}
	for _, tc := range []struct {
		name string
		tree map[string]string
		spec RecordSpec
		want map[string]string
	}{
		{"new tree, 4.18 era", nil, newSpec,
			map[string]string{newRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to \"" + ref + "\"\n"}},
		{"new tree, 4.17 era", nil, oldSpec,
			map[string]string{oldRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"" + ref + "\"\n"}},
		{"4.17 tree keeps its name under a 4.18 era", map[string]string{oldRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"x:v4.17.0-43\"\n"}, newSpec,
			map[string]string{oldRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"" + ref + "\"\n"}},
		{"both names: both updated in their own format", map[string]string{
			oldRec: "#!/usr/bin/env bash\n./scripts/auto-rebase/rebase-lvms.sh to \"x:v4.17.0-43\"\n",
			newRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to 'x:v4.18.4'\n"}, newSpec,
			map[string]string{
				oldRec: "#!/usr/bin/env bash\n./scripts/auto-rebase/rebase-lvms.sh to \"" + ref + "\"\n",
				newRec: "#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to \"" + ref + "\"\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.tree)
			got, err := Records(os.DirFS(root), tc.spec, ref)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d records, want %d: %q", len(got), len(tc.want), got)
			}
			for p, w := range tc.want {
				if string(got[p]) != w {
					t.Errorf("%s = %q, want %q", p, got[p], w)
				}
			}
			if len(tc.tree) == 0 {
				return
			}
			p, r, err := ReadRecord(os.DirFS(root), known)
			if err != nil || r == "" || (len(tc.tree) == 2 && p != newRec) {
				t.Errorf("ReadRecord = %q, %q, %v", p, r, err)
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	for in, want := range map[string]string{
		"#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to \"a/b:v4.21.0\"\n": "a/b:v4.21.0",
		"#!/bin/bash\n  scripts/auto-rebase/rebase-lvms.sh  to 'a/b:v4.17.0-43'\n":  "a/b:v4.17.0-43",
		"./scripts/auto-rebase/rebase_lvms.sh to a/b@sha256:00\n":                   "a/b@sha256:00",
	} {
		got, err := ParseRecord("r", []byte(in))
		if err != nil || got != want {
			t.Errorf("ParseRecord(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseRecord("scripts/auto-rebase/last_rebase_lvms.sh", []byte("#!/bin/bash\necho hi\n")); err == nil ||
		!strings.Contains(err.Error(), "last_rebase_lvms.sh: expected one `rebase_lvms.sh to <bundle>` command") {
		t.Errorf("error = %v", err)
	}
}

// TestRecordReadsBash: the record is updated in place at the command bash runs, not at a
// commented-out or echo'd one, and every other byte stays (comments in any encoding,
// continuations, what follows the arguments); a record bash would run twice, not at all, or
// cannot parse is an error naming its line.
func TestRecordReadsBash(t *testing.T) {
	cases := []struct{ name, record, want, wantErr string }{
		{"commented-out above", "#!/bin/bash -x\n# ./old/rebase_lvms.sh to \"x:v0\"\n./scripts/auto-rebase/rebase-lvms.sh to \"x:v1\"\n",
			"#!/bin/bash -x\n# ./old/rebase_lvms.sh to \"x:v0\"\n./scripts/auto-rebase/rebase-lvms.sh to \"y:v2\"\n", ""},
		{"echo'd above, continued", "#!/bin/bash -x\necho ./old/rebase_lvms.sh to x:v0\n./scripts/auto-rebase/rebase-lvms.sh \\\n  to \"x:v1\"\n",
			"#!/bin/bash -x\necho ./old/rebase_lvms.sh to x:v0\n./scripts/auto-rebase/rebase-lvms.sh \\\n  to \"y:v2\"\n", ""},
		{"Latin-1 comment kept byte for byte", "#!/bin/bash -x\n# mis \xe0 jour par Andr\xe9\n./scripts/auto-rebase/rebase_lvms.sh to 'x:v1' >/dev/null\n",
			"#!/bin/bash -x\n# mis \xe0 jour par Andr\xe9\n./scripts/auto-rebase/rebase_lvms.sh to \"y:v2\" >/dev/null\n", ""},
		{"no shebang stays without one", "./scripts/auto-rebase/rebase_lvms.sh to x:v1", "./scripts/auto-rebase/rebase_lvms.sh to \"y:v2\"", ""},
		{"two commands", "./scripts/auto-rebase/rebase_lvms.sh to a:v1\n./scripts/auto-rebase/rebase_lvms.sh to b:v2\n", "", "line 2: a second rebase_lvms.sh to command (the first is on line 1)"},
		{"through nohup", "./scripts/auto-rebase/rebase_lvms.sh to a:v1\nnohup ./scripts/auto-rebase/rebase_lvms.sh to b:v2\n", "", "line 2: `nohup` runs rebase_lvms.sh"},
		{"not bash", "./scripts/auto-rebase/rebase_lvms.sh to \"a:v1\n", "", "line 1"},
		{"no command", "#!/bin/bash -x\n# nothing\n", "", "bash would run no `rebase_lvms.sh to <bundle>` command"},
		{"empty", "", "", "bash would run no `rebase_lvms.sh to <bundle>` command"},
		{"after exit", "exit 0\n./scripts/auto-rebase/rebase_lvms.sh to a:v1\n", "", "line 2: rebase_lvms.sh to never runs"},
		{"CRLF", "#!/bin/bash -x\r\n./scripts/auto-rebase/rebase_lvms.sh to \"a:v1\"\r\n", "", "line 1: carriage return"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := RecordSpec{Name: "last_rebase_lvms.sh", Script: "./x/rebase_lvms.sh", Known: []string{"last_rebase_lvms.sh"}}
			recs, err := Records(os.DirFS(writeTree(t, map[string]string{RecordPath: tc.record})), spec, "y:v2")
			got := recs[RecordPath]
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), RecordPath) {
					t.Fatalf("error %v, want %q naming %s", err, tc.wantErr, RecordPath)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReconcileWithoutRecipes(t *testing.T) {
	res, err := Reconcile(t.TempDir(), RecipeFiles, Components, nil, map[string][]string{"components/lvms": {"a.yaml"}})
	if err != nil || len(res.Files) != 0 || len(res.Warnings) != 1 {
		t.Errorf("got %v, %+v", err, res)
	}
}

func TestReconcileDropsLoneGroupComment(t *testing.T) {
	root := writeTree(t, map[string]string{"scripts/auto-rebase/assets_lvms.yaml": lvmsYAML})
	names := []string{"topolvm-configmap_lvms-version.yaml", "topolvm.io_logicalvolumes.yaml", "topolvm-openshift-storage_namespace.yaml"}
	before := map[string][]string{"components/lvms": append(names, "lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml")}
	res, err := Reconcile(root, RecipeFiles, Components[:1], before, map[string][]string{"components/lvms": names})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(lvmsYAML, "      # Webhook\n      - file: lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml\n", "", 1)
	if got := string(res.Files["scripts/auto-rebase/assets_lvms.yaml"]); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestReconcileRefusesBrokenRecipe: a recipe that does not parse, or is not shaped as
// presubmit.py reads it, is an error naming the recipe and the line, and nothing is returned
// to write (Validate refuses it the same way, before a run fetches anything).
func TestReconcileRefusesBrokenRecipe(t *testing.T) {
	const lvmsPath = "scripts/auto-rebase/assets_lvms.yaml"
	cases := []struct{ name, recipe, want string }{
		{"tab indentation", "assets:\n\t- dir: components/lvms/\n", "line 2"},
		{"unclosed flow list", "assets:\n  - dir: components/lvms/\n    files: [\n", "line 3"},
		{"bad indentation", lvmsYAML + "     - file: misplaced.yaml\n", "line 17"},
		{"not a mapping", "- dir: components/lvms/\n", "line 1: expected a mapping with an `assets:` list"},
		{"no assets list", "asset:\n  - dir: components/lvms/\n", "line 1: expected an `assets:` list"},
		{"entry without dir", "assets:\n  - src: lvms/amd64/\n", "line 2: assets: expected an entry with a dir: or file: name"},
		{"files not a list", "assets:\n  - dir: components/lvms/\n    files:\n", "line 3: files (dir components/lvms/): expected a list, found nothing"},
		{"file item without file", "assets:\n  - dir: components/lvms/\n    files:\n      - ignore: \"x\"\n", "line 4: files: expected an entry with a file: name"},
		{"key twice", "assets:\n  - dir: components/lvms/\n    files: []\n    files:\n      - file: a.yaml\n", `line 4: key "files" given twice (first on line 3)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"scripts/auto-rebase/assets.yaml": assetsYAML, lvmsPath: tc.recipe})
			res, err := Reconcile(root, RecipeFiles, Components, nil, map[string][]string{"components/lvms": {"a.yaml"}})
			if err == nil || !strings.Contains(err.Error(), lvmsPath) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reconcile: %v (result %+v), want an error naming %s and %q", err, res, lvmsPath, tc.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
			if err := Validate(root, RecipeFiles, Components); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v", err)
			}
			if err := Check(root, RecipeFiles, Components); err == nil || !strings.Contains(err.Error(), lvmsPath) {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// TestReconcileNormalisedDir: handle_assets.py joins paths, so `./components/lvms/` and
// `components//lvms` name the directory lvms-rebase owns; its entry is edited, not reported missing.
func TestReconcileNormalisedDir(t *testing.T) {
	for _, dir := range []string{"./components/lvms/", "components//lvms", "components/lvms"} {
		t.Run(dir, func(t *testing.T) {
			recipe := strings.Replace(lvmsYAML, "dir: components/lvms/", "dir: "+dir, 1)
			root := writeTree(t, map[string]string{"scripts/auto-rebase/assets_lvms.yaml": recipe})
			after := []string{"lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml", "new.yaml", "topolvm-configmap_lvms-version.yaml", "topolvm-openshift-storage_namespace.yaml", "topolvm.io_logicalvolumes.yaml"}
			res, err := Reconcile(root, RecipeFiles, Components[:1], nil, map[string][]string{"components/lvms": after})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(res.Files["scripts/auto-rebase/assets_lvms.yaml"]), recipe+"      - file: new.yaml\n"; got != want || len(res.Warnings) != 0 {
				t.Errorf("got warnings %v and:\n%s\nwant:\n%s", res.Warnings, got, want)
			}
		})
	}
}

// TestReconcileDirInTwoRecipes: a directory listed in two recipes is edited in both, the same
// way, with a warning naming both; listed twice in one recipe it is refused naming both lines.
func TestReconcileDirInTwoRecipes(t *testing.T) {
	lvmsEntry := "  - dir: ./components/lvms\n    files:\n      - file: topolvm.io_logicalvolumes.yaml\n      - file: old.yaml\n"
	root := writeTree(t, map[string]string{
		"scripts/auto-rebase/assets.yaml":      assetsYAML + "\n" + lvmsEntry,
		"scripts/auto-rebase/assets_lvms.yaml": lvmsYAML,
	})
	after := []string{"lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml", "new.yaml", "topolvm-configmap_lvms-version.yaml", "topolvm-openshift-storage_namespace.yaml", "topolvm.io_logicalvolumes.yaml"}
	before := map[string][]string{"components/lvms": append([]string{"old.yaml"}, after[2:]...)}
	res, err := Reconcile(root, RecipeFiles, Components[:1], before, map[string][]string{"components/lvms": after})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "scripts/auto-rebase/assets.yaml (line 23) and scripts/auto-rebase/assets_lvms.yaml (line 3)") {
		t.Errorf("warnings %q do not name both recipes", res.Warnings)
	}
	if len(res.Changes) != 2 || res.Changes[0].Recipe == res.Changes[1].Recipe {
		t.Errorf("changes %+v: want one per recipe", res.Changes)
	}
	files := map[string]string{}
	for p, d := range res.Files {
		files[p] = string(d)
	}
	for _, n := range after {
		files["assets/components/lvms/"+n] = "kind: X\n"
	}
	if err := Check(writeTree(t, files), RecipeFiles, Components[:1]); err != nil {
		t.Errorf("the two recipes disagree with the directory after the edit: %v", err)
	}

	twice := writeTree(t, map[string]string{"scripts/auto-rebase/assets_lvms.yaml": lvmsYAML + "\n" + lvmsEntry})
	_, err = Reconcile(twice, RecipeFiles, Components[:1], before, map[string][]string{"components/lvms": after})
	if err == nil || !strings.Contains(err.Error(), "scripts/auto-rebase/assets_lvms.yaml: assets/components/lvms/ is listed twice (lines 3 and 19)") {
		t.Errorf("error %v, want the recipe and both lines", err)
	}
}

// TestReconcileRecipeNames: the recipe files are the caller's (a branch's own names).
func TestReconcileRecipeNames(t *testing.T) {
	root := writeTree(t, map[string]string{"scripts/auto-rebase/lvms_assets.yaml": lvmsYAML})
	res, err := Reconcile(root, []string{"lvms_assets.yaml"}, Components[:1], nil, map[string][]string{"components/lvms": {"topolvm.io_logicalvolumes.yaml"}})
	if err != nil || len(res.Files) != 1 || res.Files["scripts/auto-rebase/lvms_assets.yaml"] == nil {
		t.Fatalf("got %v, %+v", err, res)
	}
	if got := Existing(root, []string{"assets_lvms.yaml", "lvms_assets.yaml"}); strings.Join(got, " ") != "scripts/auto-rebase/lvms_assets.yaml" {
		t.Errorf("Existing = %v", got)
	}
}

// TestReconcileKeepsLineEnds: a recipe with CRLF line ends gets its added entries (and the
// files list of an empty entry) with CRLF too, so the file keeps one line-end style; an LF
// recipe stays LF.
func TestReconcileKeepsLineEnds(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	const emptyEntry = "assets:\n  - dir: components/lvms/\n    src: lvms/amd64/\n    files: []\n  - dir: release/\n    files:\n      - file: release-x86_64.json\n"
	after := []string{"lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml", "new.yaml", "topolvm-configmap_lvms-version.yaml", "topolvm-openshift-storage_namespace.yaml", "topolvm.io_logicalvolumes.yaml"}
	for _, tc := range []struct{ name, recipe, want string }{
		{"CRLF, appended", crlf(lvmsYAML), crlf(lvmsYAML + "      - file: new.yaml\n")},
		{"CRLF without a final line end", strings.TrimSuffix(crlf(lvmsYAML), "\r\n"), crlf(lvmsYAML + "      - file: new.yaml\n")},
		{"CRLF, empty list filled", crlf(emptyEntry), crlf(strings.Replace(emptyEntry, "    files: []\n", "    files:\n"+
			"      - file: lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml\n      - file: new.yaml\n      - file: topolvm-configmap_lvms-version.yaml\n"+
			"      - file: topolvm-openshift-storage_namespace.yaml\n        ignore: \"provided by MicroShift\"\n      - file: topolvm.io_logicalvolumes.yaml\n", 1))},
		{"LF stays LF", lvmsYAML, lvmsYAML + "      - file: new.yaml\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"scripts/auto-rebase/assets_lvms.yaml": tc.recipe})
			res, err := Reconcile(root, RecipeFiles, Components[:1], nil, map[string][]string{"components/lvms": after})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Files["scripts/auto-rebase/assets_lvms.yaml"]); got != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// TestRecipeNotUTF8: YAML is UTF-8 (PyYAML, which presubmit.py and handle_assets.py read the
// recipes with, refuses anything else too), so a recipe with a Latin-1 byte, in a comment or
// anywhere, is refused naming the recipe, the line and the byte, and nothing is written.
func TestRecipeNotUTF8(t *testing.T) {
	const lvmsPath = "scripts/auto-rebase/assets_lvms.yaml"
	recipe := strings.Replace(lvmsYAML, "# CRDs", "# CRDs (d\xe9finitions)", 1)
	root := writeTree(t, map[string]string{lvmsPath: recipe})
	res, err := Reconcile(root, RecipeFiles, Components[:1], nil, map[string][]string{"components/lvms": {"a.yaml"}})
	for _, w := range []string{lvmsPath, "line 9", "0xe9", "UTF-8"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("Reconcile: %v (result %+v), want an error saying %q", err, res, w)
		}
	}
	if err := Validate(root, RecipeFiles, Components); err == nil || !strings.Contains(err.Error(), "0xe9") {
		t.Errorf("Validate: %v", err)
	}
}

// TestRecordsRefuseUnquotableRef: a bundle reference bash would not read back as itself in
// double quotes is refused, for a new record as for an existing one, rather than written into
// a script a maintainer runs.
func TestRecordsRefuseUnquotableRef(t *testing.T) {
	spec := RecordSpec{Name: "last_rebase_lvms.sh", Script: "./scripts/auto-rebase/rebase_lvms.sh", Known: []string{"last_rebase_lvms.sh"}}
	for _, tree := range []map[string]string{nil, {RecordPath: "./scripts/auto-rebase/rebase_lvms.sh to \"a:v1\"\n"}} {
		for _, ref := range []string{"a:v1$(reboot)", "a:`id`", "a:v1\" \"b"} {
			if recs, err := Records(os.DirFS(writeTree(t, tree)), spec, ref); err == nil || !strings.Contains(err.Error(), RecordPath) {
				t.Errorf("Records(%q) with record %v = %q, %v; want an error naming %s", ref, tree != nil, recs, err, RecordPath)
			}
		}
	}
}

// TestRecipeAliasBomb: a recipe whose anchors list the one before ten times over nine levels
// (a billion entries once aliases are expanded, as PyYAML and the shape check expand them)
// is refused naming the recipe, instead of being walked entry by entry without end.
func TestRecipeAliasBomb(t *testing.T) {
	const lvmsPath = "scripts/auto-rebase/assets_lvms.yaml"
	var b strings.Builder
	b.WriteString("l0: &l0 {dir: components/x, files: [{file: a.yaml}]}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d {dir: components/x, dirs: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	b.WriteString("assets: [*l9]\n")
	root := writeTree(t, map[string]string{lvmsPath: b.String()})
	err := Validate(root, RecipeFiles, Components)
	if err == nil || !strings.Contains(err.Error(), lvmsPath) || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("Validate: %v, want the recipe named and its size refused", err)
	}
}

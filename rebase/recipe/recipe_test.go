package recipe

import (
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
	res, err := Reconcile(root, Components, before, after)
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
	res, err = Reconcile(root2, Components, after, after)
	if err != nil || len(res.Files) != 0 || len(res.Changes) != 0 {
		t.Errorf("second reconcile: %v, %d files, %+v", err, len(res.Files), res.Changes)
	}
	if err := Check(root2, Components); err != nil {
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
	err := Check(root, Components)
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

func TestRecord(t *testing.T) {
	root := t.TempDir()
	got, err := Record(root, "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4-3")
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/bash -x\n./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4-3\"\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	root = writeTree(t, map[string]string{RecordPath: "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"x:v1\"\n"})
	got, _ = Record(root, "y:v2")
	if string(got) != "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"y:v2\"\n" {
		t.Errorf("existing script path not kept: %q", got)
	}
}

// TestRecordReadsBash: the script path kept is the one bash runs, not a commented-out or
// echo'd one; a record bash would run twice or cannot parse is an error naming its line.
func TestRecordReadsBash(t *testing.T) {
	const kept = "#!/bin/bash -x\n./scripts/auto-rebase/rebase-lvms.sh to \"y:v2\"\n"
	cases := []struct{ name, record, want, wantErr string }{
		{"commented-out above", "#!/bin/bash -x\n# ./old/rebase_lvms.sh to \"x:v0\"\n./scripts/auto-rebase/rebase-lvms.sh to \"x:v1\"\n", kept, ""},
		{"echo'd above", "#!/bin/bash -x\necho ./old/rebase_lvms.sh to x:v0\n./scripts/auto-rebase/rebase-lvms.sh \\\n  to \"x:v1\"\n", kept, ""},
		{"two commands", "./scripts/auto-rebase/rebase_lvms.sh to a:v1\n./scripts/auto-rebase/rebase_lvms.sh to b:v2\n", "", "line 2: a second rebase_lvms.sh to command (the first is on line 1)"},
		{"not bash", "./scripts/auto-rebase/rebase_lvms.sh to \"a:v1\n", "", "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Record(writeTree(t, map[string]string{RecordPath: tc.record}), "y:v2")
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
	res, err := Reconcile(t.TempDir(), Components, nil, map[string][]string{"components/lvms": {"a.yaml"}})
	if err != nil || len(res.Files) != 0 || len(res.Warnings) != 1 {
		t.Errorf("got %v, %+v", err, res)
	}
}

func TestReconcileDropsLoneGroupComment(t *testing.T) {
	root := writeTree(t, map[string]string{"scripts/auto-rebase/assets_lvms.yaml": lvmsYAML})
	names := []string{"topolvm-configmap_lvms-version.yaml", "topolvm.io_logicalvolumes.yaml", "topolvm-openshift-storage_namespace.yaml"}
	before := map[string][]string{"components/lvms": append(names, "lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml")}
	res, err := Reconcile(root, Components[:1], before, map[string][]string{"components/lvms": names})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(lvmsYAML, "      # Webhook\n      - file: lvms-operator_admissionregistration.k8s.io_v1_webhook.yaml\n", "", 1)
	if got := string(res.Files["scripts/auto-rebase/assets_lvms.yaml"]); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

package era

import (
	"path"
	"slices"
)

// Records are the names a MicroShift branch gives the files that record its LVMS rebases,
// next to the asset layout because they follow the same MicroShift releases: up to 4.17 the
// bundle record is last_lvms_rebase.sh calling rebase-lvms.sh and the LVMS recipe is
// lvms_assets.yaml; from 4.18 last_rebase_lvms.sh calling rebase_lvms.sh and
// assets_lvms.yaml. A tree that carries the other era's name keeps it (its own record is
// updated, no second one is added); see recipe.Records for the rule.
type Records struct {
	// Record is the bundle record under scripts/auto-rebase/ a tree without one gets.
	Record string
	// Script is the command a new record calls (an existing record keeps its own).
	Script string
	// Recipe is the LVMS asset recipe's name in this era.
	Recipe string
}

var (
	oldRecords = Records{Record: "last_lvms_rebase.sh", Script: "./scripts/auto-rebase/rebase-lvms.sh", Recipe: "lvms_assets.yaml"}
	newRecords = Records{Record: "last_rebase_lvms.sh", Script: "./scripts/auto-rebase/rebase_lvms.sh", Recipe: "assets_lvms.yaml"}
)

// RecordNames are the bundle record names of every era, newest first: the names a tree may
// carry its record under (4.18–4.20 trees carry both).
func RecordNames() []string {
	var out []string
	for i := len(OCPTable) - 1; i >= 0; i-- {
		if n := OCPTable[i].Records.Record; !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Retired declares component files an era does not write, with the reason a tree that
// carries them (from another era) may lose them. A file in a component directory that the
// rebase does not write and no Retired entry of the era matches stops the run: the files a
// branch ships are the authority (its start-up code reads them by name).
type Retired struct {
	// Dir is the component directory relative to assets/ ("components/lvms").
	Dir string
	// Glob is a path.Match pattern over file names in Dir.
	Glob string
	Why  string
}

// Matches reports whether the file dir/name is retired by r.
func (r Retired) Matches(dir, name string) bool {
	if r.Dir != dir {
		return false
	}
	ok, err := path.Match(r.Glob, name)
	return err == nil && ok
}

// RetiredFor returns the entry of retired that matches dir/name, if any.
func RetiredFor(retired []Retired, dir, name string) (Retired, bool) {
	for _, r := range retired {
		if r.Matches(dir, name) {
			return r, true
		}
	}
	return Retired{}, false
}

const (
	lvmsDir     = "components/lvms"
	snapshotDir = "components/csi-snapshot-controller"
	whyWebhook  = "MicroShift 4.18 removed the CSI snapshot validation webhook (\"Remove CSI webhook\")"
	whyLeader   = "MicroShift ships the snapshot controller's leader-election Role/RoleBinding as files of their own only from 4.22; earlier branches keep them inside 05_operand_rbac.yaml and their start-up code does not read them"
	whyTopoLVM  = "MicroShift 4.17 replaced its TopoLVM manifests with the LVMS operator (\"replace topolvm with lvms\")"
	whyLVMS     = "the TopoLVM era (up to 4.16) deploys TopoLVM itself, not the LVMS operator"
)

var (
	retiredLeaderElectionSplit = []Retired{
		{snapshotDir, "role.yaml", whyLeader},
		{snapshotDir, "rolebinding.yaml", whyLeader},
	}
	retiredVersionConfigMap = Retired{lvmsDir, "topolvm-configmap_lvms-version.yaml", "MicroShift 4.14 has no kube-public/lvms-version ConfigMap (added in 4.15)"}
)

func retiredSnapshotWebhook() []Retired {
	return []Retired{{snapshotDir, "webhook_*.yaml", whyWebhook}}
}

// retiredTopoLVMFiles are the TopoLVM-only files of components/lvms (4.12–4.16 names).
func retiredTopoLVMFiles() []Retired {
	var out []Retired
	for _, g := range []string{"csi-driver.yaml", "topolvm-controller_*", "topolvm-node*", "topolvm-lvmd-config_*",
		"topolvm-csi-*", "topolvm-leader-election_*", "topolvm-metrics_*"} {
		out = append(out, Retired{lvmsDir, g, whyTopoLVM})
	}
	return out
}

// retiredLVMSFiles are the LVMS-only files of components/lvms (4.17 on).
func retiredLVMSFiles() []Retired {
	var out []Retired
	for _, g := range []string{"lvm.topolvm.io_*", "lvms-*", "lvms_*", "vg-manager*"} {
		out = append(out, Retired{lvmsDir, g, whyLVMS})
	}
	return out
}

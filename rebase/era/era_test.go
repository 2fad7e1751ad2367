package era

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestFor(t *testing.T) {
	cases := []struct {
		ocp, want, wantOCP, wantErr string
	}{
		{"4.14", "topolvm-4.14", "ocp-4.14", ""},
		{"4.15", "topolvm-4.15", "ocp-4.14", ""},
		{"4.16", "topolvm-4.16", "ocp-4.14", ""},
		{"4.17", "lvms-4.17", "ocp-4.17", ""},
		{"4.18", "lvms-4.18", "ocp-4.18", ""},
		{"4.19", "lvms-4.18", "ocp-4.18", ""},
		{"4.20", "lvms-4.20", "ocp-4.18", ""},
		{"4.21", "lvms-4.20", "ocp-4.18", ""},
		{"4.22", "lvms-4.20", "ocp-4.22", ""},
		{"4.23", "lvms-4.20", "ocp-4.22", ""},
		{"5.0", "lvms-4.20", "ocp-5", ""},
		{"4.18.3", "lvms-4.18", "ocp-4.18", ""},
		{"4.13", "", "", "no storage era declared"},
		{"6.0", "", "", "no storage era declared"},
		{"four", "", "", "expected X.Y"},
	}
	for _, tc := range cases {
		t.Run(tc.ocp, func(t *testing.T) {
			e, err := For(tc.ocp)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("For(%q) error = %v, want %q", tc.ocp, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tc.want || e.OCPEra != tc.wantOCP {
				t.Fatalf("For(%q) = %s/%s, want %s/%s", tc.ocp, e.Name, e.OCPEra, tc.want, tc.wantOCP)
			}
		})
	}
}

// TestCombine: a 5.0 tree with a 4.21 bundle renders LVMS 4.21's objects with 5.0's
// snapshot controller; a 4.17 tree with a forced 4.21 bundle keeps 4.17's snapshot webhook.
func TestCombine(t *testing.T) {
	cases := []struct {
		ocp, lvms, name, snapOverlay, lvmsOverlay string
		webhook                                   bool
		wantErr                                   string
	}{
		{"5.0", "4.21", "lvms-4.20", "overlays/csi-snapshot-controller/4.18", "overlays/lvms/4.20", false, ""},
		{"4.22", "4.21", "lvms-4.20", "overlays/csi-snapshot-controller/4.18", "overlays/lvms/4.20", false, ""},
		{"4.17", "4.21", "lvms-4.20", "overlays/csi-snapshot-controller/4.14", "overlays/lvms/4.20", true, ""},
		{"4.16", "4.15", "topolvm-4.16", "overlays/csi-snapshot-controller/4.14", "overlays/topolvm/4.16", true, ""},
		{"4.15", "4.15", "topolvm-4.15", "overlays/csi-snapshot-controller/4.14", "overlays/topolvm/4.15", true, ""},
		{"4.16", "4.16", "", "", "", false, "no LVMS era declared"},
		{"4.18", "4.15", "", "", "", false, "no LVMS era declared"},
	}
	for _, tc := range cases {
		t.Run(tc.ocp+"+"+tc.lvms, func(t *testing.T) {
			e, err := Combine(tc.ocp, tc.lvms)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tc.name || e.SnapshotOverlay != tc.snapOverlay || e.LVMSOverlay != tc.lvmsOverlay || e.SnapshotWebhook != tc.webhook || e.LVMSMinor != tc.lvms {
				t.Fatalf("Combine(%s, %s) = %+v", tc.ocp, tc.lvms, e)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	published := []string{"4.14", "4.15", "4.16", "4.17", "4.18", "4.20", "4.21"}
	cases := []struct {
		ocp       string
		published []string
		minor     string
		rule      string
		warn      bool
		wantErr   string
	}{
		{"4.18", published, "4.18", "exact", false, ""},
		{"4.21", published, "4.21", "exact", false, ""},
		{"4.19", published, "4.18", "newest-below", true, ""},
		{"4.22", published, "4.21", "newest-below", true, ""},
		{"5.0", published, "4.21", "newest-below", true, ""},
		{"5.9", published, "4.21", "newest-below", true, ""},
		{"4.16", published, "4.15", "pinned", false, ""},
		{"4.16", nil, "4.15", "pinned", false, ""},
		{"4.14", []string{"4.15"}, "", "", false, "no LVMS bundle of minor 4.14"},
		{"4.17", []string{"4.15", "4.16"}, "", "", false, "nor any from 4.17"},
		{"5.0", []string{"5.1", "4.21"}, "4.21", "newest-below", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.ocp, func(t *testing.T) {
			c, err := Choose(tc.ocp, tc.published)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Minor != tc.minor || c.Rule != tc.rule || (c.Warning != "") != tc.warn || c.Reason == "" {
				t.Fatalf("Choose(%s) = %+v, want minor %s rule %s warning %v", tc.ocp, c, tc.minor, tc.rule, tc.warn)
			}
			if tc.warn && (!strings.Contains(c.Warning, tc.ocp) || !strings.Contains(c.Warning, tc.minor)) {
				t.Errorf("warning %q does not name both %s and %s", c.Warning, tc.ocp, tc.minor)
			}
		})
	}
}

func count[T any](rows []T, match func(T) bool) int {
	n := 0
	for _, r := range rows {
		if match(r) {
			n++
		}
	}
	return n
}

// TestTablesConsistent guards the tables: every constraint parses; every OpenShift minor
// from 4.14 to 5.9 has exactly one OCP row and one policy; ranges do not overlap; every
// LVMS minor a policy can choose for it (floor … the minor) matches at most one LVMS row
// and the default choice exactly one; every key is a storage key.
func TestTablesConsistent(t *testing.T) {
	for _, r := range OCPTable {
		mustParse(t, r.Name, r.OCP)
	}
	for _, r := range LVMSTable {
		mustParse(t, r.Name, r.LVMS)
		if r.OCP != "" {
			mustParse(t, r.Name, r.OCP)
		}
	}
	for _, p := range Policies {
		mustParse(t, "policy", p.OCP)
	}
	minors := KnownMinors()
	for _, m := range minors {
		v, _ := minorOf("", m)
		if n := count(OCPTable, func(r OCPRow) bool { return matches(r.OCP, v) }); n != 1 {
			t.Errorf("OpenShift %s matches %d OCP rows, want 1", m, n)
		}
		if n := count(Policies, func(p Policy) bool { return matches(p.OCP, v) }); n != 1 {
			t.Errorf("OpenShift %s matches %d policies, want 1", m, n)
		}
		p, err := PolicyFor(m)
		if err != nil {
			continue
		}
		if _, err := For(m); err != nil {
			t.Errorf("OpenShift %s: default LVMS minor has no row: %v", m, err)
		}
		for _, l := range minors {
			lv, _ := minorOf("", l)
			floor := v
			if p.Floor != "" {
				floor, _ = minorOf("", p.Floor)
			}
			if p.Pin != "" && l != p.Pin || p.Pin == "" && (lv.GreaterThan(v) || lv.LessThan(floor)) {
				continue
			}
			if n := count(LVMSTable, func(r LVMSRow) bool { return matches(r.LVMS, lv) && matches(r.OCP, v) }); n != 1 {
				t.Errorf("LVMS %s on OpenShift %s (a possible fallback) matches %d LVMS rows, want 1", l, m, n)
			}
		}
	}
	storage := map[string]bool{}
	for _, k := range StorageKeys {
		storage[k] = true
	}
	for _, e := range Table() {
		for _, k := range e.ReleaseKeys() {
			if !storage[k] {
				t.Errorf("era %s writes key %q that is not in StorageKeys", e.Name, k)
			}
		}
		if e.Namespace == "" || e.LVMSOverlay == "" || e.SnapshotOverlay == "" {
			t.Errorf("era %s: namespace and overlays are required", e.Name)
		}
	}
	if len(Table()) != len(LVMSTable) {
		t.Errorf("Table has %d eras, want one per LVMS row (%d)", len(Table()), len(LVMSTable))
	}
}

func mustParse(t *testing.T, name, c string) {
	t.Helper()
	if _, err := semver.NewConstraint(c); err != nil {
		t.Errorf("%s: constraint %q: %v", name, c, err)
	}
}

// TestBranchRecordsAndLayout: the record and recipe names and the snapshot split follow
// MicroShift's branches (last_lvms_rebase.sh/lvms_assets.yaml up to 4.17; role.yaml and
// rolebinding.yaml from 4.22); every retired file has a reason.
func TestBranchRecordsAndLayout(t *testing.T) {
	for _, tc := range []struct {
		ocp, record, script, recipe string
		leaderSplit                 bool
	}{
		{"4.14", "last_lvms_rebase.sh", "./scripts/auto-rebase/rebase-lvms.sh", "lvms_assets.yaml", false},
		{"4.17", "last_lvms_rebase.sh", "./scripts/auto-rebase/rebase-lvms.sh", "lvms_assets.yaml", false},
		{"4.18", "last_rebase_lvms.sh", "./scripts/auto-rebase/rebase_lvms.sh", "assets_lvms.yaml", false},
		{"4.21", "last_rebase_lvms.sh", "./scripts/auto-rebase/rebase_lvms.sh", "assets_lvms.yaml", false},
		{"4.22", "last_rebase_lvms.sh", "./scripts/auto-rebase/rebase_lvms.sh", "assets_lvms.yaml", true},
		{"4.23", "last_rebase_lvms.sh", "./scripts/auto-rebase/rebase_lvms.sh", "assets_lvms.yaml", true},
		{"5.0", "last_rebase_lvms.sh", "./scripts/auto-rebase/rebase_lvms.sh", "assets_lvms.yaml", true},
	} {
		e, err := For(tc.ocp)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Records; r.Record != tc.record || r.Script != tc.script || r.Recipe != tc.recipe {
			t.Errorf("%s: records %+v", tc.ocp, r)
		}
		if got := strings.Contains(strings.Join(e.SnapshotSplit, ","), "Role,RoleBinding"); got != tc.leaderSplit {
			t.Errorf("%s: leader-election split %v, want %v", tc.ocp, got, tc.leaderSplit)
		}
		_, retired := RetiredFor(e.Retired, "components/csi-snapshot-controller", "role.yaml")
		if retired == tc.leaderSplit {
			t.Errorf("%s: role.yaml retired %v while split %v", tc.ocp, retired, tc.leaderSplit)
		}
		for _, r := range e.Retired {
			if r.Why == "" || r.Dir == "" || r.Glob == "" {
				t.Errorf("%s: retired entry without dir, glob or reason: %+v", tc.ocp, r)
			}
		}
	}
	if got := RecordNames(); strings.Join(got, ",") != "last_rebase_lvms.sh,last_lvms_rebase.sh" {
		t.Errorf("RecordNames = %q", got)
	}
}

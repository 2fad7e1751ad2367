package era

import (
	"strings"
	"testing"
)

// TestLocked: --check applies the lock's LVMS rule again to the pinned bundle's minor;
// the recorded choice comes back only when minor, rule and reason are what the rule gives (a
// forced or pinned choice also with its reason worded as before November 2026).
func TestLocked(t *testing.T) {
	for _, tc := range []struct {
		ocp, rule, minor string
		reason           string // recorded
		want             string // Rule/Reason of the result
	}{
		{"5.0", "newest-below", "4.21", "", "newest-below/no LVMS 5.0 bundle is published; 4.21 is the newest published LVMS minor below it"},
		{"4.21", "exact", "4.21", "", "exact/an LVMS 4.21 bundle is published"},
		{"4.21", "newest-below", "4.21", "", "exact/an LVMS 4.21 bundle is published"}, // an edited rule
		{"4.16", "pinned", "4.15", "", "pinned/the era table pins LVMS 4.15"},
		{"5.0", "flag", "4.20", "", "flag/forced: LVMS 4.20 was asked for"},
		{"5.0", "bundle", "4.20", "", "bundle/the minor of the pinned bundle"},
		// Locks written before the reasons stopped naming CLI flags keep their words (spelled
		// here without the CLI's namer); any other reason is an edit.
		{"5.0", "flag", "4.20", "forced with LVMS 4.20", "flag/forced with LVMS 4.20"},
		{"5.0", "bundle", "4.20", "the minor of the bundle pinned with LVMSBundle", "bundle/the minor of the bundle pinned with LVMSBundle"},
		{"5.0", "flag", "4.20", "because", "flag/forced: LVMS 4.20 was asked for"},
		{"4.21", "exact", "4.21", "an edited reason", "exact/an LVMS 4.21 bundle is published"},        // a policy's reason is derived
		{"4.21", "exact", "5.0", "", "none/OpenShift 4.21: no LVMS bundle of minor 4.21 is published"}, // above the OpenShift minor
	} {
		got := Locked(tc.ocp, tc.rule, tc.reason, tc.minor)
		if s := got.Rule + "/" + got.Reason; !strings.HasPrefix(s, tc.want) || got.Warning != "" {
			t.Errorf("Locked(%s, %s, %s) = %+v, want %s…", tc.ocp, tc.rule, tc.minor, got, tc.want)
		}
	}
}

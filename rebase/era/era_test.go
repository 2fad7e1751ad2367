package era

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestFor(t *testing.T) {
	cases := []struct {
		ocp, want, wantErr string
	}{
		{"4.14", "topolvm-4.14", ""},
		{"4.15", "topolvm-4.15", ""},
		{"4.16", "topolvm-4.16", ""},
		{"4.17", "lvms-4.17", ""},
		{"4.18", "lvms-4.18", ""},
		{"4.19", "lvms-4.18", ""},
		{"4.20", "lvms-4.20", ""},
		{"4.23", "lvms-4.20", ""},
		{"5.0", "lvms-4.20", ""},
		{"4.18.3", "lvms-4.18", ""},
		{"4.13", "", "no storage era declared"},
		{"four", "", "expected X.Y"},
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
			if e.Name != tc.want {
				t.Fatalf("For(%q) = %s, want %s", tc.ocp, e.Name, tc.want)
			}
		})
	}
}

// TestTableConsistent guards the table itself: no overlapping ranges, every key a storage key.
func TestTableConsistent(t *testing.T) {
	storage := map[string]bool{}
	for _, k := range StorageKeys {
		storage[k] = true
	}
	for minor := 10; minor <= 30; minor++ {
		v, _ := semver.NewVersion(fmt.Sprintf("4.%d.0", minor))
		matches := 0
		for _, e := range Table {
			c, err := semver.NewConstraint(e.OCP)
			if err != nil {
				t.Fatalf("era %s: %v", e.Name, err)
			}
			if c.Check(v) {
				matches++
			}
		}
		if matches > 1 {
			t.Errorf("4.%d matches %d eras", minor, matches)
		}
	}
	for _, e := range Table {
		for _, k := range e.ReleaseKeys() {
			if !storage[k] {
				t.Errorf("era %s writes key %q that is not in StorageKeys", e.Name, k)
			}
		}
		if e.Namespace == "" || e.LVMSOverlay == "" || e.SnapshotOverlay == "" {
			t.Errorf("era %s: namespace and overlays are required", e.Name)
		}
	}
}

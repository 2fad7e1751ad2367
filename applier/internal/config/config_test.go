package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Drop-ins merge into config.yaml as JSON merge patches, in walk order: maps merge, lists and
// scalars replace, null deletes; blank files are skipped.
func TestMerged(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.yaml", "storage: {driver: lvms, optionalCsiComponents: [a, b]}\ndns: {baseDomain: x}\n")
	write("config.d/10-a.yaml", "storage: {optionalCsiComponents: [none]}\n")
	write("config.d/20-blank.yaml", "\n")
	write("config.d/30/sub.yaml", "dns: null\n")
	write("config.d/ignored.yml", "storage: {driver: none}\n")
	raw, name, err := Merged(filepath.Join(dir, "config.yaml"), filepath.Join(dir, "config.d"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"storage":{"driver":"lvms","optionalCsiComponents":["none"]}}`; string(raw) != want {
		t.Errorf("merged = %s, want %s", raw, want)
	}
	if want := filepath.Join(dir, "config.yaml") + " merged with 3 drop-ins from " + filepath.Join(dir, "config.d"); name != want {
		t.Errorf("name = %q, want %q", name, want)
	}
	if raw, _, err := Merged(filepath.Join(dir, "absent.yaml"), filepath.Join(dir, "absent.d")); raw != nil || err != nil {
		t.Errorf("no config: %s %v, want nil", raw, err)
	}
}

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// A config.yaml or drop-in that is a FIFO, a device or too large is an error naming it, read
// without blocking; too many drop-ins are an error naming the directory.
func TestMergedRefusesSpecialAndHugeFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string) error
		want  string
	}{
		{"config.yaml a FIFO", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "config.yaml"), 0o644) }, "config.yaml: a named pipe (FIFO), not a regular file"},
		{"drop-in a symlink to /dev/zero", func(dir string) error {
			return os.Symlink("/dev/zero", filepath.Join(dir, "config.d", "10-zero.yaml"))
		}, "10-zero.yaml: a character device, not a regular file"},
		{"drop-in too large", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.d", "big.yaml"), make([]byte, MaxFileSize+1), 0o644)
		}, "big.yaml: has 1048577 bytes, more than the 1048576 allowed"},
		{"too many drop-ins", func(dir string) error {
			for i := 0; i <= MaxDropIns; i++ {
				if err := os.WriteFile(filepath.Join(dir, "config.d", fmt.Sprintf("%03d.yaml", i)), nil, 0o644); err != nil {
					return err
				}
			}
			return nil
		}, "more than 256 *.yaml drop-in files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "config.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, _, err := Merged(filepath.Join(dir, "config.yaml"), filepath.Join(dir, "config.d"))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Merged = %v, want an error containing %q", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("Merged blocked")
			}
		})
	}
}

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "lvmd.yaml")
	if changed, err := WriteFile(p, []byte("a long first version\n"), 0o644); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	// A shorter config must not leave trailing bytes (the legacy copy did not truncate).
	if changed, err := WriteFile(p, []byte("short\n"), 0o644); err != nil || !changed {
		t.Fatalf("second write: %v %v", changed, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "short\n" {
		t.Fatalf("content = %q", b)
	}
	if changed, err := WriteFile(p, []byte("short\n"), 0o644); err != nil || changed {
		t.Fatalf("identical write: changed=%v err=%v, want unchanged", changed, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

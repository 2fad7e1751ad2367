//go:build unix

package readfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every special file is refused with its kind named, without blocking; a symlink to a regular
// file is read; caps hold; a missing file is fs.ErrNotExist.
func TestHostAndFS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.yaml", "a: 1\n")
	write("big.yaml", strings.Repeat("x", 100))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zero.yaml": "/dev/zero", "link.yaml": ok, "dirlink.yaml": dir} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		special    bool
	}{
		{"ok.yaml", "", false},
		{"link.yaml", "", false},
		{"fifo.yaml", "a named pipe (FIFO), not a regular file", true},
		{"zero.yaml", "a character device, not a regular file", true},
		{"dir.yaml", "a directory, not a regular file", true},
		{"dirlink.yaml", "a directory, not a regular file", true},
		{"big.yaml", "has 100 bytes, more than the 64 allowed", false},
	} {
		for via, read := range map[string]func() ([]byte, error){
			"Host": func() ([]byte, error) { return Host(filepath.Join(dir, tc.name), 64) },
			"FS":   func() ([]byte, error) { return FS(os.DirFS(dir), tc.name, 64) },
		} {
			done := make(chan struct{})
			var data []byte
			var err error
			go func() { data, err = read(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s(%s) blocked", via, tc.name)
			}
			if tc.want == "" {
				if err != nil || string(data) != "a: 1\n" {
					t.Errorf("%s(%s) = %q, %v", via, tc.name, data, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.name+": "+tc.want) || errors.Is(err, ErrSpecial) != tc.special {
				t.Errorf("%s(%s) = %v, want %q (special %v)", via, tc.name, err, tc.want, tc.special)
			}
		}
	}
	if _, err := Host(filepath.Join(dir, "missing"), 64); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := FS(os.DirFS(dir), "missing", 64); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

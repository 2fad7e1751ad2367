//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	// The mode is part of "identical", and is exact whatever the umask.
	old := syscall.Umask(0o077)
	changed, err := WriteFile(p, []byte("short\n"), 0o640)
	syscall.Umask(old)
	if fi, _ := os.Stat(p); err != nil || !changed || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode change: changed=%v err=%v mode=%v", changed, err, fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestWriteFileReplacesSpecialTargets: a symlink at the target (to a device that never ends,
// or to a file outside) is replaced by the file, neither read nor written through; a FIFO is
// replaced without being opened.
func TestWriteFileReplacesSpecialTargets(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, make := range map[string]func(string) error{
		"symlink to /dev/zero":     func(p string) error { return os.Symlink("/dev/zero", p) },
		"symlink to a file beside": func(p string) error { return os.Symlink(outside, p) },
		"fifo":                     func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.NewReplacer(" ", "-", "/", "-").Replace(name))
			if err := make(p); err != nil {
				t.Fatal(err)
			}
			if changed, err := WriteFile(p, []byte("keep\n"), 0o644); err != nil || !changed {
				t.Fatalf("changed=%v err=%v", changed, err)
			}
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("target is %v, %v; want a regular file", fi.Mode(), err)
			}
			if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
				t.Fatalf("written through the symlink: %q", b)
			}
		})
	}
}

// TestCreateCommitDiscard: a streamed write is invisible until Commit; Discard (also when
// deferred after Commit) leaves the path as it was and no temporary file; a second Commit
// is an error.
func TestCreateCommitDiscard(t *testing.T) {
	for _, o := range []Options{{}, {NoSync: true}} {
		dir := t.TempDir()
		p := filepath.Join(dir, "blob")
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := o.Create(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "old" {
			t.Fatalf("visible before Commit: %q", b)
		}
		if err := f.Discard(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "old" {
			t.Fatalf("Discard changed the target: %q", b)
		}
		f, err = o.Create(p, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := f.Discard(); err != nil {
			t.Fatalf("Discard after Commit: %v", err)
		}
		if err := f.Commit(); err == nil {
			t.Fatal("second Commit succeeded")
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", fi.Mode())
		}
		if b, _ := os.ReadFile(p); string(b) != "new" {
			t.Fatalf("content %q", b)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
	}
}

// TestCommitFailureLeavesTarget: a rename that cannot happen (the target is a non-empty
// directory) fails naming the path, and leaves no temporary file.
func TestCommitFailureLeavesTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(p, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

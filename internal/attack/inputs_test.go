package attack

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The hostile inputs rows build: each helper replaces (or creates) a path with one kind of file.

// put writes data at the slash-separated path rel under dir, replacing what was there.
func put(t *testing.T, dir, rel, data string, mode os.FileMode) string {
	t.Helper()
	p := clear(t, dir, rel)
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// link makes rel a symbolic link to target.
func link(t *testing.T, dir, rel, target string) string {
	t.Helper()
	p := clear(t, dir, rel)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// fifo makes rel a named pipe nobody writes to: a reader that opens it blocks forever.
func fifo(t *testing.T, dir, rel string) string {
	t.Helper()
	p := clear(t, dir, rel)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// directory makes rel a directory.
func directory(t *testing.T, dir, rel string) string {
	t.Helper()
	p := clear(t, dir, rel)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hugeFile makes rel a sparse file of size bytes (no disk, all zeros but its first line).
func hugeFile(t *testing.T, dir, rel, first string, size int64) string {
	t.Helper()
	p := put(t, dir, rel, first, 0o644)
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// overCap is a size past every per-file cap of the tool (16 MiB).
const overCap = 17 << 20

func clear(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hook installs an executable git hook in the tree's repository.
func hook(t *testing.T, w *world, name, script string) {
	t.Helper()
	put(t, w.tree, ".git/hooks/"+name, "#!/bin/sh\n"+script+"\n", 0o755)
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

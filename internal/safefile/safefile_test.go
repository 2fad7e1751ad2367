package safefile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// hostileTree builds a tree with one file of every class the policy decides on.
func hostileTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk := func(rel string, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mk("dir/regular", "content")
	mk("outside/secret", "other content")
	link("/dev/zero", "dev-zero")
	link("regular", "dir/link-to-regular")
	link("missing", "dangling")
	link("outside", "linked-dir")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file one byte over the cap costs no disk.
	huge, err := os.Create(filepath.Join(root, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(DefaultMaxSize + 1); err != nil {
		t.Fatal(err)
	}
	huge.Close()
	// A socket path short enough for sun_path: the temp dir may be long.
	sockDir, err := os.MkdirTemp("", "sf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	l, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	link(filepath.Join(sockDir, "s"), "socket-link")
	return root
}

// within fails the test when f does not return within a generous bound: a read that blocks
// (a FIFO opened without O_NONBLOCK) would otherwise hang the whole test binary.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30s", what)
	}
}

// TestReadPolicy holds every input class to its outcome, for a tree's file (ReadIn, FS) and
// for a file a person named (ReadFile with Follow).
func TestReadPolicy(t *testing.T) {
	root := hostileTree(t)
	for _, tc := range []struct {
		rel        string
		tree, user string // "" = read; else a substring of the error
	}{
		{"dir/regular", "", ""},
		{"dir/link-to-regular", "symbolic link", ""},
		{"dev-zero", "symbolic link", "character device"},
		{"fifo", "named pipe (FIFO)", "named pipe (FIFO)"},
		{"dir", "a directory", "a directory"},
		{"huge", "16777217 bytes, over the 16777216-byte cap", "16777217 bytes, over the 16777216-byte cap"},
		{"dangling", "symbolic link", "no such file"},
		{"missing", "no such file", "no such file"},
		{"linked-dir/secret", "linked-dir: not a regular file (a symbolic link)", ""},
		{"socket-link", "symbolic link", "a socket"},
		{"../outside", "invalid argument", ""},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			within(t, tc.rel, func() {
				_, err := ReadIn(root, tc.rel, 0)
				expect(t, "ReadIn", err, tc.tree, root)
				_, err = fs.ReadFile(FS(root), tc.rel)
				expect(t, "fs.ReadFile(FS)", err, tc.tree, root)
				_, err = ReadFS(FS(root), tc.rel, 0)
				expect(t, "ReadFS(FS)", err, tc.tree, root)
				if tc.rel == "../outside" {
					return
				}
				_, err = ReadFile(filepath.Join(root, tc.rel), Options{Follow: true})
				expect(t, "ReadFile(Follow)", err, tc.user, root)
			})
		})
	}
}

func expect(t *testing.T, what string, err error, want, root string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want the content", what, err)
	case want != "" && err == nil:
		t.Errorf("%s: read, want an error with %q", what, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: %v, want %q", what, err, want)
	case want != "" && !strings.Contains(err.Error(), root) && !errors.Is(err, fs.ErrInvalid):
		t.Errorf("%s: %v does not name the file", what, err)
	}
}

// TestErrorClasses: callers tell a refused type from an oversized file, and a missing file
// stays fs.ErrNotExist (optional records are absent, not broken).
func TestErrorClasses(t *testing.T) {
	root := hostileTree(t)
	if _, err := ReadIn(root, "fifo", 0); !errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) {
		t.Errorf("fifo: %v, want ErrNotRegular", err)
	}
	if _, err := ReadIn(root, "huge", 0); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotRegular) {
		t.Errorf("huge: %v, want ErrTooLarge", err)
	}
	if _, err := ReadIn(root, "dir/regular", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a cap of 3 bytes on 7: %v, want ErrTooLarge", err)
	}
	if _, err := ReadIn(root, "missing", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist", err)
	}
	if b, err := ReadIn(root, "dir/regular", 7); err != nil || string(b) != "content" {
		t.Errorf("a file of exactly the cap: %q, %v", b, err)
	}
}

// TestReadStopsAtCapWhenFileGrows: the size checked before the read does not bound the
// read; a file longer than its stat said still stops one byte past the cap.
func TestReadStopsAtCapWhenFileGrows(t *testing.T) {
	r := strings.NewReader(strings.Repeat("x", 100))
	_, err := readAll("growing", r, 10, 50)
	var e *Error
	if !errors.As(err, &e) || e.Size != -1 || e.Max != 50 || !strings.Contains(err.Error(), "grew") {
		t.Errorf("readAll of 100 bytes stated as 10, cap 50: %v", err)
	}
	b, err := readAll("exact", strings.NewReader("abc"), 0, 3)
	if err != nil || string(b) != "abc" {
		t.Errorf("readAll of 3 bytes stated as 0, cap 3: %q, %v", b, err)
	}
}

// TestFSWalks: FS lists and walks directories like os.DirFS, and a generic fs.FS is read
// through its Stat (a map file system stands for one without a policy of its own).
func TestFSWalks(t *testing.T) {
	root := hostileTree(t)
	var files []string
	err := fs.WalkDir(FS(root), "dir", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		files = append(files, p)
		return nil
	})
	if err != nil || strings.Join(files, ",") != "dir,dir/link-to-regular,dir/regular" {
		t.Errorf("WalkDir: %v, %v", files, err)
	}
	m := fstest.MapFS{"a": {Data: []byte("12345")}, "p": {Mode: fs.ModeNamedPipe}}
	if b, err := ReadFS(m, "a", 0); err != nil || string(b) != "12345" {
		t.Errorf("ReadFS(map, a): %q, %v", b, err)
	}
	if _, err := ReadFS(m, "a", 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFS(map, a, 4): %v, want ErrTooLarge", err)
	}
	if _, err := ReadFS(m, "p", 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFS(map, pipe): %v, want ErrNotRegular", err)
	}
}

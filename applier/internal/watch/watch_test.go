package watch

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// File syncs once at start and after writes to the file, once they have been quiet for the
// debounce; writes to other files in the directory do not count.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lvmd.yaml")
	syncs := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- File(ctx, Options{Path: path, What: "test file", Debounce: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			func(context.Context) { syncs <- struct{}{} })
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-syncs:
		case <-time.After(10 * time.Second):
			t.Fatalf("no sync %s", what)
		}
	}
	wait("at start")
	for i := 0; i < 3; i++ {
		if err := os.WriteFile(path, []byte{byte('a' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wait("after the writes")
	time.Sleep(200 * time.Millisecond)
	for len(syncs) > 0 { // a loaded machine may split the burst
		<-syncs
	}
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if len(syncs) > 0 {
		t.Error("synced for a write to another file")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("File after cancel: %v", err)
	}
	if err := File(context.Background(), Options{Path: filepath.Join(dir, "absent", "x"), What: "test file"}, func(context.Context) {}); err == nil {
		t.Error("watching a file in a missing directory succeeded")
	}
}

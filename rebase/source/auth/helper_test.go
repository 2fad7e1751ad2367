package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// TestCredentialHelperGivesWayToTheContext: a docker credential helper that never answers
// (docker's config names credsStore "hang"; the helper waits on a FIFO) holds a lookup only
// until the run's context ends — SIGINT, SIGTERM or --timeout — and the error names the
// helper and the registry. Before, the lookup waited for the helper whatever the context
// said (go-containerregistry's default keychain takes no context): this test hung.
func TestCredentialHelperGivesWayToTheContext(t *testing.T) {
	dir := t.TempDir()
	bin, home := filepath.Join(dir, "bin"), filepath.Join(dir, "home")
	fifo, started := filepath.Join(dir, "fifo"), filepath.Join(dir, "started")
	for _, d := range []string{bin, filepath.Join(home, ".docker")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	helper := "#!/bin/sh\n: > '" + started + "'\ncat '" + fifo + "' > /dev/null\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-hang"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".docker", "config.json"), []byte(`{"credsStore": "hang"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", home)
	for _, v := range []string{"DOCKER_CONFIG", "REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		t.Setenv(v, "")
	}
	// Let the helper end once the test is over: its cat reads the FIFO's end of file.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	k, err := New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel(context.Canceled)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	reg, _ := name.NewRegistry("registry.example")
	a, err := k.ResolveContext(ctx, reg)
	if err == nil {
		t.Fatalf("credentials %v, want the lookup to end with the context", a)
	}
	for _, want := range []string{"docker credential helper", "registry.example", "context canceled"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want it to say %q", err, want)
		}
	}
}

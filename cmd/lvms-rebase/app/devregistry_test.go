package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lvms-rebase/lvms-rebase/rebase/fixtures"
)

// startDevRegistry runs `dev-registry args...` until the test ends and returns its
// "ready" host and the remaining announcement lines.
func startDevRegistry(t *testing.T, args ...string) (string, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: pw, ErrOut: io.Discard})
	root.SetArgs(append([]string{"dev-registry"}, args...))
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev-registry exited with %v after cancel", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("dev-registry did not stop after its context was cancelled")
		}
	})
	lines := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		lines[k] = v
		if k == "snapshot-assets" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if lines["ready"] == "" {
		select {
		case err := <-done:
			t.Fatalf("dev-registry exited before ready: %v", err)
		default:
			t.Fatalf("no ready line; got %v", lines)
		}
	}
	return lines["ready"], lines
}

func TestDevRegistryServesEmbeddedFixtures(t *testing.T) {
	host, lines := startDevRegistry(t, "--addr", "127.0.0.1:0")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("ready host %q", host)
	}
	if want := "--mirror registry.redhat.io=" + host + "/registry.redhat.io --mirror quay.io=" + host + "/quay.io"; lines["mirror-flags"] != want {
		t.Errorf("mirror-flags %q, want %q", lines["mirror-flags"], want)
	}
	repo, _ := name.NewRepository(host+"/"+fixtures.BundleRepo, name.Insecure)
	tags, err := remote.List(repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) < 20 {
		t.Errorf("bundle repository lists %d tags", len(tags))
	}
	resp, err := http.Get(strings.Replace(lines["snapshot-assets"], "{commit}", "nope", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown snapshot commit: %d", resp.StatusCode)
	}
}

func TestDevRegistryAuthAndFixturesDir(t *testing.T) {
	dir := t.TempDir()
	if err := fixtures.Generate(dir, fixtures.Options{Minors: []string{"4.18"}}); err != nil {
		t.Fatal(err)
	}
	host, _ := startDevRegistry(t, "--fixtures", dir, "--username", "dev", "--password", "fixture")
	repo, _ := name.NewRepository(host+"/"+fixtures.BundleRepo, name.Insecure)
	_, err := remote.List(repo)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous list: %v, want 401", err)
	}
	tags, err := remote.List(repo, remote.WithAuth(&authn.Basic{Username: "dev", Password: "fixture"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		if !strings.HasPrefix(tag, "v4.18") {
			t.Errorf("--fixtures tree limited to 4.18 serves tag %s", tag)
		}
	}
}

func TestDevRegistryUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"username without password", []string{"--username", "u"}},
		{"non-loopback address", []string{"--addr", "0.0.0.0:5000"}},
		{"missing fixtures dir", []string{"--fixtures", "/nonexistent/fixtures"}},
		{"unexpected argument", []string{"extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := Main(append([]string{"dev-registry"}, tc.args...), IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, ExitUsage, errOut.String())
			}
		})
	}
}

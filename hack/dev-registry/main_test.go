package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// startDevRegistry runs `dev-registry args...` until the test ends and returns its
// "ready" host and the remaining announcement lines.
func startDevRegistry(t *testing.T, args ...string) (string, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, args, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("dev-registry exited %d after cancel", code)
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
		if k == "snapshot-files" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if lines["ready"] == "" {
		select {
		case code := <-done:
			t.Fatalf("dev-registry exited %d before ready", code)
		default:
			t.Fatalf("no ready line; got %v", lines)
		}
	}
	return lines["ready"], lines
}

func TestDevRegistryServesCheckoutFixtures(t *testing.T) {
	host, lines := startDevRegistry(t, "--addr", "127.0.0.1:0")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("ready host %q", host)
	}
	if want := "--mirror registry.redhat.io=" + host + "/registry.redhat.io --mirror quay.io=" + host + "/quay.io" +
		" --mirror registry.ci.openshift.org=" + host + "/registry.ci.openshift.org" +
		" --mirror raw.githubusercontent.com=" + host + "/raw.githubusercontent.com" +
		" --mirror storage.googleapis.com=" + host + "/storage.googleapis.com" +
		" --mirror mirror.openshift.com=" + host + "/mirror.openshift.com"; lines["mirror-flags"] != want {
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
	commit := fixtureCommit(t)
	url := strings.NewReplacer("{commit}", commit, "{path}", "manifests/05_operand_rbac.yaml").Replace(lines["snapshot-files"])
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s (snapshot-files line): %d, want 200", url, resp.StatusCode)
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
			code := run(context.Background(), tc.args, &out, &errOut)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, exitUsage, errOut.String())
			}
		})
	}
}

// The help text lists the flags and is not an error (was `lvms-rebase dev-registry --help`).
func TestDevRegistryHelp(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), "-addr") {
		t.Errorf("--help: exit %d, output lacks --addr:\n%s%s", code, out.String(), errOut.String())
	}
}

// fixtureCommit is the snapshot-controller operator commit of the first fixture archive.
func fixtureCommit(t *testing.T) string {
	t.Helper()
	dir, err := testregistry.FixturesDir()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "snapshot-assets"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("fixture snapshot-assets: %v", err)
	}
	return strings.TrimSuffix(ents[0].Name(), ".tar.gz")
}

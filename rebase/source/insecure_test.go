package source

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestInsecureRegistryTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	// The failed handshakes below are the point of the test, not noise worth printing.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	img := image(t, "amd64", randomLayer(t, 64))
	ref, err := name.ParseReference(host + "/lvms4/op:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithTransport(srv.Client().Transport)); err != nil {
		t.Fatal(err)
	}
	o := Options{CacheDir: t.TempDir(), Retry: RetryOptions{Attempts: 1}}
	if _, err := newSource(t, o).ImageDigests(ctx(t), host+"/lvms4/op:v1", []string{"x86_64"}); err == nil {
		t.Fatal("self-signed registry accepted without --insecure-registry")
	}
	o.Insecure = []string{host}
	d, err := newSource(t, o).ImageDigests(ctx(t), host+"/lvms4/op:v1", []string{"x86_64"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Arches[0].Digest != digestOf(t, img) {
		t.Fatalf("digest %+v", d)
	}
}

// TestCacheTwoProcesses fills one cache from two processes at once (this test binary
// re-executed), then checks a third run needs no blob.
func TestCacheTwoProcesses(t *testing.T) {
	w := newWorld(t, worldOpts{filler: 256 << 10})
	cache := t.TempDir()
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "LVMS_REBASE_CACHE_CHILD="+w.reg.host(), "LVMS_REBASE_CACHE_DIR="+cache)
		cmd.Stdout, cmd.Stderr = &strings.Builder{}, &strings.Builder{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v\n%s%s", err, cmd.Stdout, cmd.Stderr)
		}
		if !strings.Contains(cmd.Stdout.(*strings.Builder).String(), "cache child done") {
			t.Fatalf("child did not run: %s", cmd.Stdout)
		}
	}
	w.reg.reset()
	o := w.options(t)
	o.CacheDir = cache
	if _, err := newSource(t, o).FetchPayload(ctx(t), PayloadRef{Arch: "x86_64", Ref: releaseRepo + ":4.18.5-x86_64"}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if n := w.reg.blobGETs(); n != 0 {
		t.Fatalf("%d blob GETs after two processes filled the cache", n)
	}
	tmp, _ := filepath.Glob(filepath.Join(cache, "blobs", "sha256", ".*"))
	if len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

// TestMain runs the child half of TestCacheTwoProcesses when this binary is re-executed
// with LVMS_REBASE_CACHE_CHILD set.
func TestMain(m *testing.M) {
	if host := os.Getenv("LVMS_REBASE_CACHE_CHILD"); host != "" {
		if err := cacheChild(host, os.Getenv("LVMS_REBASE_CACHE_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("cache child done")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func cacheChild(host, cacheDir string) error {
	s, err := New(Options{Mirrors: []Mirror{{Source: "quay.io", Mirror: host + "/quay.io"}}, CacheDir: cacheDir})
	if err != nil {
		return err
	}
	for _, a := range []string{"x86_64", "aarch64"} {
		dir, err := os.MkdirTemp("", "cache-child-")
		if err != nil {
			return err
		}
		_, err = s.FetchPayload(context.Background(), PayloadRef{Arch: a, Ref: releaseRepo + ":4.18.5-" + a}, dir)
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	return nil
}

// Package controlplane starts a real etcd and kube-apiserver on 127.0.0.1 for tests, using
// controller-runtime's envtest with the binaries `make control-plane` builds into
// $KUBEBUILDER_ASSETS.
//
// A missing KUBEBUILDER_ASSETS fails the test with the command to run: silently skipping would let
// `go test ./...` pass without ever touching an API server. Under `go test -short` the
// control-plane tests are skipped instead.
package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// quietLogs keeps controller-runtime from printing a stack trace about its unset logger; envtest's
// own progress is not interesting in test output.
var quietLogs sync.Once

// AssetsEnv names the directory holding the kube-apiserver and etcd binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// ControlPlane is a running etcd + kube-apiserver.
type ControlPlane struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	env    *envtest.Environment
}

// AssetsDir returns the binaries directory, or an error that says how to build it.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		return "", fmt.Errorf("%s is not set: run `make control-plane` (or `make test`, which builds it) "+
			"to build kube-apiserver and etcd, then export %s=<dir> or run the tests through make; use "+
			"`go test -short` to skip the control-plane tests", AssetsEnv, AssetsEnv)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s=%s has no %s (%w): run `make control-plane`", AssetsEnv, dir, bin, err)
		}
	}
	return dir, nil
}

// New starts a control plane; Stop must be called.
func New() (*ControlPlane, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	quietLogs.Do(func() { crlog.SetLogger(logr.Discard()) })
	env := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: 60 * time.Second, // two shared cores: the default 20 s is tight
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// Without a node controller the endpoint reconciler keeps rewriting the kubernetes Service's
	// endpoints for an address nothing listens on; tests need no in-cluster access.
	env.ControlPlane.GetAPIServer().Configure().Set("endpoint-reconciler-type", "none")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	return &ControlPlane{Config: cfg, env: env}, nil
}

// Stop stops kube-apiserver, then etcd, and removes their data.
func (c *ControlPlane) Stop() error {
	if err := c.env.Stop(); err != nil {
		return fmt.Errorf("stopping control plane: %w", err)
	}
	return nil
}

// Start starts a fresh control plane for one test and stops it when the test ends. It skips
// under -short and fails (never skips) when the binaries are missing.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("control-plane test skipped under -short")
	}
	cp, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return rest.CopyConfig(cp.Config)
}

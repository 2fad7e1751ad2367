package controlplanetest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
)

func TestAssetsDirMissing(t *testing.T) {
	t.Setenv(AssetsEnv, "")
	_, err := AssetsDir()
	if err == nil || !strings.Contains(err.Error(), "make control-plane") {
		t.Fatalf("AssetsDir() error = %v, want one telling to run make control-plane", err)
	}
	t.Setenv(AssetsEnv, t.TempDir())
	if _, err := AssetsDir(); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("AssetsDir() on an empty dir: error = %v, want one naming kube-apiserver", err)
	}
}

// The harness serves TLS the client trusts and authenticates it as a cluster administrator.
func TestStart(t *testing.T) {
	cfg := Start(t)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatalf("ServerVersion: %v", err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.") {
		t.Errorf("GitVersion = %q, want a v1.x release", v.GitVersion)
	}
	// RBAC is on: only system:masters may list cluster roles.
	if _, err := dc.RESTClient().Get().AbsPath("/apis/rbac.authorization.k8s.io/v1/clusterroles").DoRaw(context.Background()); err != nil {
		t.Fatalf("listing clusterroles as admin: %v", err)
	}
	t.Logf("kube-apiserver %s", v.GitVersion)
}

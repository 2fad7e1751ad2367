package rebase

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// laneRun rebases a fresh copy of testdata/microshift onto 4.17 against reg and returns the
// error and the tree, which must be as it was.
func laneRun(t *testing.T, reg *testregistry.Registry) error {
	t.Helper()
	dir := copyDir(t, "../testdata/microshift")
	before := hashTree(t, dir)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Options{OCP: "4.17", AllowBaseMismatch: true, MicroShiftDir: dir, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t),
			Source: source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir()}})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		// Half the source's stall timeout: a request left hanging would hold Run longer.
		t.Fatal("Run did not return: a request it started was left hanging")
	}
	if err == nil {
		t.Fatal("Run succeeded, want an error")
	}
	if after := hashTree(t, dir); after != before {
		t.Errorf("a failed run changed the tree")
	}
	return err
}

// TestLanesReportInPhaseOrder: the payload lane fails first (its tag list), the bundle lane
// later (a blob, after its tag list and manifest); the error is the bundle's, as when the
// bundle was resolved before the payloads, and names the bundle.
func TestLanesReportInPhaseOrder(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/ocp-release/tags/list", Kind: testregistry.FaultStatus, Status: http.StatusForbidden})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/lvms-operator-bundle/blobs/", Kind: testregistry.FaultStatus, Status: http.StatusForbidden})
	for range 3 {
		err := laneRun(t, reg)
		if !strings.Contains(err.Error(), "lvms-operator-bundle") || strings.Contains(err.Error(), "ocp-release") {
			t.Fatalf("error = %v\nwant the bundle's (it comes first whatever finished first)", err)
		}
	}
	var bundleBlob, releaseTags bool
	for _, e := range reg.Timeline() {
		bundleBlob = bundleBlob || strings.Contains(e.Path, "/lvms-operator-bundle/blobs/")
		releaseTags = releaseTags || strings.Contains(e.Path, "/ocp-release/tags/list")
	}
	if !bundleBlob || !releaseTags {
		t.Errorf("both lanes should have run to their fault: bundle blob requested %v, release tags requested %v", bundleBlob, releaseTags)
	}
}

// TestFailedResolveCancelsPayloadDownloads: the bundle fails while the payloads' layers
// hang (a registry that never answers); the run reports the bundle's error at once, and the
// hanging downloads end with it (the client cancels them), leaving nothing running. The
// bundle fails at its relatedImages, two round trips after the payloads' layers were asked
// for (a 100 ms round trip keeps that order).
func TestFailedResolveCancelsPayloadDownloads(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Network: testregistry.Network{Delay: 100 * time.Millisecond}})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/ocp-release/blobs/", Kind: testregistry.FaultStall})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/lvms4/lvms-rhel9-operator/manifests/", Kind: testregistry.FaultStatus, Status: http.StatusForbidden})
	err := laneRun(t, reg)
	if !strings.Contains(err.Error(), "lvms-rhel9-operator") {
		t.Fatalf("error = %v\nwant the bundle's relatedImage's", err)
	}
	// A stalled request is recorded when its handler returns, which it does only when the
	// client goes away: every stalled download must be recorded soon after Run returned.
	stalled := 0
	for range 100 {
		stalled = 0
		for _, e := range reg.Timeline() {
			if strings.Contains(e.Path, "/ocp-release/blobs/") {
				stalled++
			}
		}
		if stalled > 0 && stalled == reg.Stats().Requests(http.MethodGet, "/ocp-release/blobs/") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d of %d stalled payload downloads ended after Run returned: the payload lane was not cancelled",
		stalled, reg.Stats().Requests(http.MethodGet, "/ocp-release/blobs/"))
}

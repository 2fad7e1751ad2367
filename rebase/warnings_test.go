package rebase

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestSourceWarningsReachResult: a warning the image source logs (a retried request) is one
// of the run's warnings — in Result.Warnings and, verbatim, in the PR body — exactly once,
// although the source has no logger of its own here (nothing is printed at all).
func TestSourceWarningsReachResult(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	reg.Inject(testregistry.Fault{Method: http.MethodGet, Path: "/blobs/", Kind: testregistry.FaultStatus, Status: http.StatusServiceUnavailable, Count: 1})
	dir := copyDir(t, "../testdata/microshift")
	body := filepath.Join(t.TempDir(), "pr.md")
	res, err := Run(context.Background(), Options{OCP: "4.17", AllowBaseMismatch: true, MicroShiftDir: dir, Kustomize: lvmsrebase.Kustomize, ToolVersion: "test", Provenance: signed(t), PRBody: body,
		Source: source.Options{Mirrors: registryMirrors(reg), CacheDir: t.TempDir(), Retry: source.RetryOptions{Backoff: time.Millisecond}}})
	if err != nil {
		t.Fatalf("rebase with one 503: %v", err)
	}
	if reg.FaultHits() != 1 {
		t.Fatalf("fault hits = %d, want 1", reg.FaultHits())
	}
	var retries []string
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "retrying request ") {
			retries = append(retries, w)
		}
	}
	if len(retries) != 1 || !strings.Contains(retries[0], "status=503") {
		t.Fatalf("retry warnings in the result = %q, want one with status=503 (all: %q)", retries, res.Warnings)
	}
	pr, err := os.ReadFile(body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pr), retries[0]) {
		t.Errorf("PR body lacks the warning %q:\n%s", retries[0], pr)
	}
}

// TestLagWarnsUntilLocked: a lagging LVMS minor is a warning until the tree's lock records
// that choice for that OpenShift minor; a lock of another OpenShift minor, LVMS minor or rule,
// or none, warns again.
func TestLagWarnsUntilLocked(t *testing.T) {
	c := era.Choice{Minor: "4.21", Rule: "newest-below", Warning: "OpenShift 5.0: no LVMS 5.0 bundle is published; using LVMS 4.21"}
	for _, tc := range []struct {
		name   string
		old    *lock.Lock
		quiets bool
	}{
		{"no lock", nil, false},
		{"a lock without a choice", &lock.Lock{OCP: "5.0"}, false},
		{"the same choice", &lock.Lock{OCP: "5.0", LVMS: &lock.LVMS{Minor: "4.21", Rule: "newest-below"}}, true},
		{"another OpenShift minor", &lock.Lock{OCP: "4.22", LVMS: &lock.LVMS{Minor: "4.21", Rule: "newest-below"}}, false},
		{"another LVMS minor", &lock.Lock{OCP: "5.0", LVMS: &lock.LVMS{Minor: "4.20", Rule: "newest-below"}}, false},
		{"another rule", &lock.Lock{OCP: "5.0", LVMS: &lock.LVMS{Minor: "4.21", Rule: "flag"}}, false},
	} {
		r := &run{opts: Options{OCP: "5.0"}, old: tc.old}
		if got := r.lockRecords(c); got != tc.quiets {
			t.Errorf("%s: lockRecords %v, want %v", tc.name, got, tc.quiets)
		}
	}
}

package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// maxHostileRSS is the acceptance bound of issue 18: a run against a hostile registry stays
// under 200 MB of resident memory.
const maxHostileRSS = 200 << 20

// TestHostileRegistryRSS runs lvms-rebase as a real process against a registry that
// misbehaves without failing — tags/list pagination linking to itself or never ending, a
// tag list page of a gigabyte, manifests of a gigabyte or of a few MB that are not what
// their digest says — and measures the child's peak RSS (ru_maxrss through
// hack/bench/rusage, so the test process's own footprint is not carried into the figure).
// Each run must fail with an error naming the bound and the input, at a bounded memory
// cost; the figures are logged (go test -run TestHostileRegistryRSS -v).
func TestHostileRegistryRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end, builds hack/bench/rusage")
	}
	rusage := filepath.Join(t.TempDir(), "rusage")
	if out, err := exec.Command("go", "build", "-o", rusage, "../../../hack/bench/rusage").CombinedOutput(); err != nil {
		t.Fatalf("building hack/bench/rusage: %v\n%s", err, out)
	}
	const bundleTags = "/registry.redhat.io/lvms4/lvms-operator-bundle/tags/list"
	for _, tc := range []struct {
		name  string
		fault testregistry.Fault
		want  string
	}{
		{"self-linking tags/list", testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultSelfLink}, "pagination loops"},
		{"endless tags/list pages", testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultEndlessPages}, "past 1000 pages"},
		{"1 GiB tag list page", testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultHugeTagList, Size: 1 << 30}, "tag list page larger than"},
		{"1 GiB wrong-digest manifests", testregistry.Fault{Path: "/manifests/sha256:", Kind: testregistry.FaultWrongDigest, Size: 1 << 30}, "manifest larger than"},
		{"3 MiB wrong-digest manifests", testregistry.Fault{Path: "/manifests/sha256:", Kind: testregistry.FaultWrongDigest, Size: 3 << 20}, "does not match its digest"},
		// go-containerregistry follows same-host redirects without a bound: each ran ~2,400
		// requests a second until --timeout before the transport's redirect bound.
		{"tags/list redirected to itself", testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultRedirect}, "redirect loop"},
		{"manifests redirected to themselves", testregistry.Fault{Path: "/manifests/", Kind: testregistry.FaultRedirect}, "redirect loop"},
		{"blobs redirected to themselves", testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultRedirect}, "redirect loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			e.reg.Inject(tc.fault)
			dir := copyTree(t, "../../../testdata/microshift")
			before := treeHash(t, dir)
			args := append([]string{"--microshift-dir", dir, "-a", e.authFile, "--cache-dir", e.cache, "--insecure-registry", e.reg.Host(),
				"--ocp", "4.18", "--allow-base-mismatch", "--dry-run", "--timeout", "2m"}, append(e.reg.MirrorFlags(), e.reg.SignatureFlags()...)...)
			code, stderr, rss := runMeasured(t, rusage, args)
			t.Logf("%s: exit %d, peak RSS %.1f MiB", tc.name, code, float64(rss)/(1<<20))
			if code != ExitError || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Error: ") {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, ExitError, tc.want, stderr)
			}
			if rss <= 0 || rss > maxHostileRSS {
				t.Errorf("peak RSS %d bytes, want (0, %d]", rss, maxHostileRSS)
			}
			if treeHash(t, dir) != before {
				t.Error("the tree changed")
			}
			if tc.fault.Kind == testregistry.FaultRedirect && e.reg.FaultHits() > 20 {
				t.Errorf("%d redirects served; a loop is an error at its first repeat", e.reg.FaultHits())
			}
		})
	}
}

// runMeasured runs Main in a child process (the test binary's TestMainHelper) under the
// rusage wrapper and returns its exit code, stderr and peak RSS in bytes.
func runMeasured(t *testing.T, rusage string, args []string) (int, string, int64) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	usage := filepath.Join(t.TempDir(), "usage.json")
	cmd := exec.Command(rusage, "-o", usage, "--", os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), "LVMS_REBASE_MAIN_ARGS="+string(b))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run()
	data, err := os.ReadFile(usage)
	if err != nil {
		t.Fatalf("no usage recorded: %v\nstderr:\n%s", err, stderr.String())
	}
	var u struct {
		PeakRSSKiB int64 `json:"peakRSSKiB"`
	}
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), u.PeakRSSKiB << 10
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/binary"
)

// TestMain lets the test binary be the legacy-shaped pipeline's process, as the bench binary
// is: runLegacy runs os.Executable() with "peer".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "peer" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBenchRuns runs the whole bench as make bench does, small (no filler or padding, no
// network model, one fleet size, no kubectl): a change that makes make bench fail — the pushed
// fixture set's unsigned noise .sig tag served as a forgery failed --ocp 4.17 unnoticed — fails
// here first. It asserts that every run succeeded and was reported, not any timing.
func TestBenchRuns(t *testing.T) {
	dir := t.TempDir()
	bin, err := binary.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	rusage := filepath.Join(dir, "bench-rusage")
	if out, err := exec.Command("go", "build", "-o", rusage, "./rusage").CombinedOutput(); err != nil {
		t.Fatalf("building the rusage wrapper: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	err = benchMain([]string{"-bin", bin, "-rusage", rusage, "-out", out, "-microshift", "../../testdata/microshift",
		"-ocp", "4.18,4.17", "-fleet", "2", "-kubectl", "none", "-filler", "0", "-delay", "0", "-link-mbps", "0",
		"-snapshot-archive-bytes", "0", "-release-manifests-bytes", "0"})
	if err != nil {
		t.Fatalf("the bench failed: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("result.json: %v", err)
	}
	if len(rep.Minors) != 2 {
		t.Fatalf("result.json reports %d minors, want 2 (4.18, 4.17)", len(rep.Minors))
	}
	for _, m := range rep.Minors {
		if m.Cold.SignatureRequests == 0 || m.Warm.SignatureRequests != 0 {
			t.Errorf("--ocp %s: signature requests cold %d, warm %d; want some cold and none warm", m.OCP, m.Cold.SignatureRequests, m.Warm.SignatureRequests)
		}
	}
}

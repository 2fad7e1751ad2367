package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  bool
		wantFile bool
	}{
		{"success", []string{"--", "sh", "-c", "exit 0"}, 0, false, true},
		{"exit status is passed on", []string{"--", "sh", "-c", "exit 7"}, 7, false, true},
		{"no command", nil, 2, true, false},
		{"missing binary", []string{"--", "/nonexistent/rusage-test-binary"}, 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "usage.json")
			code, err := run(append([]string{"-o", out}, tc.args...))
			if code != tc.wantCode || (err != nil) != tc.wantErr {
				t.Fatalf("run = %d, %v; want code %d, error %v", code, err, tc.wantCode, tc.wantErr)
			}
			data, err := os.ReadFile(out)
			if !tc.wantFile {
				if err == nil {
					t.Errorf("usage file written: %s", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var u Usage
			if err := json.Unmarshal(data, &u); err != nil {
				t.Fatal(err)
			}
			if u.WallSeconds <= 0 || u.PeakRSSKiB <= 0 {
				t.Errorf("usage = %+v; want a positive wall time and peak RSS", u)
			}
		})
	}
}

// TestFloorIsSmall guards the reason this wrapper exists: a child's ru_maxrss starts at
// the wrapper's own RSS, so the wrapper must stay far below what it measures.
func TestFloorIsSmall(t *testing.T) {
	out := filepath.Join(t.TempDir(), "usage.json")
	bin := filepath.Join(t.TempDir(), "rusage")
	if code, err := run([]string{"-o", out, "--", "go", "build", "-o", bin, "."}); code != 0 || err != nil {
		t.Fatalf("building the wrapper: %d, %v", code, err)
	}
	if code, err := run([]string{"-o", out, "--", bin, "-o", out + ".inner", "--", "sh", "-c", "exit 0"}); code != 0 || err != nil {
		t.Fatalf("running the wrapper: %d, %v", code, err)
	}
	data, err := os.ReadFile(out + ".inner")
	if err != nil {
		t.Fatal(err)
	}
	var u Usage
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	if u.PeakRSSKiB <= 0 || u.PeakRSSKiB > 20<<10 {
		t.Errorf("peak RSS of sh under the wrapper = %d KiB; want a floor under 20 MiB", u.PeakRSSKiB)
	}
}

// TestCPUTime: a command that computes reports its CPU time, no more than it ran for on
// the machine's CPUs.
func TestCPUTime(t *testing.T) {
	out := filepath.Join(t.TempDir(), "usage.json")
	busy := "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
	if code, err := run([]string{"-o", out, "--", "sh", "-c", busy}); code != 0 || err != nil {
		t.Fatalf("run = %d, %v", code, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var u Usage
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	if u.CPUSeconds <= 0 || u.CPUSeconds > u.WallSeconds*float64(runtime.NumCPU()) {
		t.Errorf("usage = %+v; want a CPU time above 0 and within the wall time on %d CPUs", u, runtime.NumCPU())
	}
}

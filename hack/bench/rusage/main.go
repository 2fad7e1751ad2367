// Command rusage runs a command and records its wall time and peak RSS:
//
//	rusage -o FILE -- CMD [ARGS…]
//
// It writes {"wallSeconds":…,"peakRSSKiB":…} to FILE and exits with CMD's exit status.
// hack/bench runs every measured child through it. It must stay a small, standard-library
// only program: Go starts children with vfork semantics and Linux carries the parent's RSS
// high-water mark over the exec into the child's ru_maxrss, so the measuring parent's own
// footprint is the floor of every figure. The bench itself holds the fixture set and links
// kustomize and client libraries (tens of MiB before doing anything); this wrapper is a few
// MiB.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Usage is what rusage measured of its command.
type Usage struct {
	WallSeconds float64 `json:"wallSeconds"`
	// PeakRSSKiB is ru_maxrss of the command, which includes the maxima of the children it
	// waited for.
	PeakRSSKiB int64 `json:"peakRSSKiB"`
	// CPUSeconds is the command's user and system time: next to the wall time it says how
	// much of a run was computing, and how much waiting (for the network, or for a CPU on a
	// loaded machine).
	CPUSeconds float64 `json:"cpuSeconds"`
}

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
	}
	os.Exit(code)
}

// run measures the command and returns the exit code rusage should exit with.
func run(args []string) (int, error) {
	fs := flag.NewFlagSet("rusage", flag.ContinueOnError)
	out := fs.String("o", "", "where to write the measured usage as JSON")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *out == "" || fs.NArg() == 0 {
		return 2, errors.New("usage: rusage -o FILE -- CMD [ARGS…]")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A terminal's ^C reaches the whole process group; the command handles it itself and
	// this process must live to reap it.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		return 1, runErr
	}
	ps := cmd.ProcessState
	u := Usage{WallSeconds: time.Since(start).Seconds(), PeakRSSKiB: peakRSSKiB(ps), CPUSeconds: (ps.UserTime() + ps.SystemTime()).Seconds()}
	data, err := json.Marshal(u)
	if err != nil {
		return 1, err
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		return 1, err
	}
	return cmd.ProcessState.ExitCode(), nil
}

package app

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// TestMainHelper runs Main with the arguments in LVMS_REBASE_MAIN_ARGS (JSON) when set; the
// SIGINT test starts the test binary this way to interrupt a real process.
func TestMainHelper(t *testing.T) {
	raw := os.Getenv("LVMS_REBASE_MAIN_ARGS")
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(Main(args, IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}

// TestSIGINTNamesPhaseAndInput interrupts a run that hangs on the registry with SIGINT, then
// one with SIGTERM: each stops at once, says it was interrupted, by which signal, in which
// phase and while fetching what, exits 130 (SIGINT) or 143 (SIGTERM) and leaves the tree as
// it was.
func TestSIGINTNamesPhaseAndInput(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGINT, "SIGINT", ExitSIGINT}, {syscall.SIGTERM, "SIGTERM", ExitSIGTERM}} {
		t.Run(tc.name, func(t *testing.T) { interruptStalledRun(t, tc.sig, tc.name, tc.code) })
	}
}

func interruptStalledRun(t *testing.T, sig syscall.Signal, name string, code int) {
	e := newE2E(t)
	e.reg.Inject(testregistry.Fault{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStall})
	dir := copyTree(t, "../../../testdata/microshift")
	before := treeHash(t, dir)
	args := append([]string{"--microshift-dir", dir, "-a", e.authFile, "--cache-dir", e.cache, "--insecure-registry", e.reg.Host(),
		"--ocp", "4.18", "--allow-base-mismatch", "-v", "1"}, append(e.reg.MirrorFlags(), e.reg.SignatureFlags()...)...) // -v 1: the phase's start line says when to signal
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), "LVMS_REBASE_MAIN_ARGS="+string(b))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "resolve" && f[1] == "started" {
			time.Sleep(300 * time.Millisecond) // into the stalled blob request
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	// The exit status is the message's to explain: it is checked through the output below.
	_ = cmd.Wait()
	out := strings.Join(lines, "\n")
	for _, want := range []string{"interrupted by " + name + " in phase resolve", "while fetching", "registry.redhat.io/lvms4/lvms-operator-bundle"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if cmd.ProcessState.ExitCode() != code {
		t.Errorf("exit %d, want %d", cmd.ProcessState.ExitCode(), code)
	}
	if treeHash(t, dir) != before {
		t.Error("the tree changed")
	}
}

package plainlog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestLines: each kind of record as its plain line — a step's end, start, stop, failure and
// drift; a warning; an error record as its text (the command's one "Error:" line is its
// final error, the CLI's); any other record with its attributes (the logger's first); no
// level names, time stamps or quoting; records below the level are dropped.
func TestLines(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(New(&out, Options{Level: slog.Level(-1)}))
	log.Info("phase resolve done", "phase", "resolve", "took", "29.123ms")
	log.Log(context.Background(), -1, "phase render", "phase", "render", "state", "start")
	log.Info("phase images done", "phase", "images", "took", "343.4µs")
	log.Info("phase write done", "phase", "write", "took", "1m3.6s")
	log.Log(context.Background(), -1, "phase review stopped", "phase", "review", "took", "2ms", "state", "stopped")
	log.Error("phase translate failed", "phase", "translate", "took", "1.8764s", "state", "failed")
	log.Warn("phase write: drift found", "phase", "write", "took", "12ms", "state", "drift")
	log.With("branch", "release-4.18").Info("phase resolve done", "phase", "resolve", "took", "30ms")
	log.Warn(`CSV suggests namespace "a"; using b`)
	log.With("url", "https://quay.io/v2/").Warn("retrying request", "attempt", 1, "of", 5)
	log.Error("cannot write", "file", "x y")
	log.Info("using registry credentials", "registry", "quay.io")
	log.Log(context.Background(), -2, "hidden at -v 1")
	log.Info("phase is an attribute of no step", "phase", "x")
	want := `resolve         29ms
render          started
images          343µs
write           1m4s
review          2ms stopped
translate       1.876s failed
write           12ms drift found
resolve         30ms branch=release-4.18
Warning: CSV suggests namespace "a"; using b
Warning: retrying request url=https://quay.io/v2/ attempt=1 of=5
cannot write file=x y
using registry credentials registry=quay.io
phase is an attribute of no step phase=x
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestHold: held warnings are not written when logged; Flush writes one line with their
// count when there are several, the warning itself when there is one, nothing when none;
// the other warnings pass as they come.
func TestHold(t *testing.T) {
	for _, n := range []int{0, 1, 31} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var out bytes.Buffer
			log := slog.New(New(&out, Options{
				Hold:    func(text string) bool { return strings.HasPrefix(text, "security review: ") },
				Summary: func(n int) string { return fmt.Sprintf("security review: %d rules", n) },
			}))
			for i := range n {
				log.Warn(fmt.Sprintf("security review: role %d", i))
				log.Warn("new workload")
			}
			log.Info("phase write done", "phase", "write", "took", "1ms")
			before := out.String()
			if strings.Contains(before, "security review") {
				t.Fatalf("held warnings written before Flush:\n%s", before)
			}
			h := log.Handler().(*Handler)
			if err := h.Flush(); err != nil {
				t.Fatal(err)
			}
			after := strings.TrimPrefix(out.String(), before)
			want := map[int]string{0: "", 1: "Warning: security review: role 0\n", 31: "Warning: security review: 31 rules\n"}[n]
			if after != want {
				t.Errorf("Flush wrote %q, want %q", after, want)
			}
			if got := strings.Count(before, "Warning: new workload"); got != n {
				t.Errorf("%d other warnings written, want %d", got, n)
			}
			if err := h.Flush(); err != nil || out.String() != before+after {
				t.Errorf("a second Flush wrote again: %q", out.String())
			}
		})
	}
}

// TestHoldPerLogger: the held warnings of loggers with other attributes (a --branches run's
// branches) are counted apart, each count with its attributes, in the order first held.
func TestHoldPerLogger(t *testing.T) {
	var out bytes.Buffer
	h := New(&out, Options{
		Hold:    func(text string) bool { return strings.HasPrefix(text, "security review: ") },
		Summary: func(n int) string { return fmt.Sprintf("security review: %d rules", n) },
	})
	main, old := slog.New(h).With("branch", "main"), slog.New(h).With("branch", "release-4.18")
	for i := range 3 {
		main.Warn(fmt.Sprintf("security review: role %d", i))
		if i < 2 {
			old.Warn(fmt.Sprintf("security review: role %d", i))
		}
	}
	slog.New(h).Warn("security review: role x")
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "Warning: security review: 3 rules branch=main\nWarning: security review: 2 rules branch=release-4.18\n" +
		"Warning: security review: role x\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]string{"29.123ms": "29ms", "343.4µs": "343µs", "1.8764s": "1.876s",
		"1m3.6s": "1m4s", "0s": "0s", "soon": "soon"} {
		if got := Duration(in); got != want {
			t.Errorf("Duration(%q) = %q, want %q", in, got, want)
		}
	}
}

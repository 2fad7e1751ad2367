package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressPrinter(&buf) // a buffer is not a terminal: plain lines
	for _, done := range []int64{1 << 20, 2 << 20, 3 << 20} {
		p.report(source.Progress{Image: "quay.io/x/y:1", Digest: "sha256:abc", Done: done, Total: 4 << 20})
	}
	p.report(source.Progress{Image: "quay.io/x/y:1", Digest: "sha256:abc", Done: 4 << 20, Total: 4 << 20, Finished: true})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "1.0 MiB / 4.0 MiB") || !strings.HasSuffix(lines[1], "4.0 MiB / 4.0 MiB done") {
		t.Fatalf("want a start and a done line, got:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "\r") {
		t.Fatal("carriage returns outside a terminal")
	}
}

func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &progressPrinter{w: &buf, terminal: true, started: map[string]bool{}}
	p.report(source.Progress{Image: "i", Digest: "sha256:abc", Done: 1, Total: 2})
	p.report(source.Progress{Image: "i", Digest: "sha256:abc", Done: 2, Total: 2, Finished: true})
	if got := buf.String(); strings.Count(got, "\r") != 2 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("terminal output %q: want two rewrites of one line and a final newline", got)
	}
}

package app

import (
	"bytes"
	"encoding/json"
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

// TestProgressRecords: with --log-format text or json a download's progress is records of the
// logger (one when it starts, one when it ends), so every stderr line is logfmt, or JSON, for
// the scripts that parse them.
func TestProgressRecords(t *testing.T) {
	for _, format := range []string{logText, logJSON} {
		var buf bytes.Buffer
		logs := &logFlags{format: format}
		log, err := logs.logger(&buf)
		if err != nil {
			t.Fatal(err)
		}
		report := progressFor(logs, &buf, log)
		report(source.Progress{Image: "quay.io/x/y:1", Digest: "sha256:abc", Done: 1, Total: 2})
		report(source.Progress{Image: "quay.io/x/y:1", Digest: "sha256:abc", Done: 2, Total: 2, Finished: true})
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: want a record when the download starts and one when it ends, got:\n%s", format, buf.String())
		}
		for _, l := range lines {
			if format == logText && !strings.HasPrefix(l, "level=INFO msg=fetching ") || format == logJSON && !json.Valid([]byte(l)) {
				t.Errorf("%s: progress line %q is no %s record", format, l, format)
			}
		}
	}
}

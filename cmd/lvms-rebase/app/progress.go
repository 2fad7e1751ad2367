package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"golang.org/x/term"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// progressFor returns the progress callback of the logging flags, or nil:
//   - plain lines (the default): on a terminal one transient line that the next log line or
//     the download's end clears, so a run leaves no progress behind; elsewhere (CI) none at
//     the default verbosity, and a line when a download starts and one when it ends at -v 1;
//   - text (logfmt) and json: log records (one when a download starts, one when it ends), so
//     that every stderr line is a logfmt record, or JSON, for the scripts that parse them;
//   - -q: none.
func progressFor(logs *logFlags, w io.Writer, log *slog.Logger) func(source.Progress) {
	switch {
	case logs.quiet:
		return nil
	case logs.format == logJSON || logs.format == logText:
		return progressRecords(log)
	case logs.format == logPlain && logs.status != nil && logs.status.terminal:
		return logs.status.progress
	case logs.format == logPlain && logs.verbosity < 1:
		return nil
	}
	return newProgressPrinter(w).report
}

// progressRecords logs a record when a download starts and when it ends.
func progressRecords(log *slog.Logger) func(source.Progress) {
	var mu sync.Mutex
	started := map[string]bool{}
	return func(ev source.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if started[ev.Digest] && !ev.Finished {
			return
		}
		started[ev.Digest] = true
		log.Info("fetching", "image", ev.Image, "digest", ev.Digest, "done", ev.Done, "total", ev.Total, "finished", ev.Finished)
	}
}

// progressPrinter shows long blob downloads: a self-updating line on a terminal, and in CI
// (no terminal, or CI set) one plain line when a download starts and one when it ends, so
// logs stay readable.
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	started  map[string]bool
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, terminal: isTerminal(w), started: map[string]bool{}}
}

// isTerminal reports whether w is a terminal and CI is not set.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("CI") == "" && term.IsTerminal(int(f.Fd()))
}

func (p *progressPrinter) report(ev source.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := progressLine(ev)
	if p.terminal {
		end := ""
		if ev.Finished {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r\033[K%s%s", line, end)
		return
	}
	if !p.started[ev.Digest] || ev.Finished {
		p.started[ev.Digest] = true
		if ev.Finished {
			line += " done"
		}
		fmt.Fprintln(p.w, line)
	}
}

// progressLine is a download's progress for people.
func progressLine(ev source.Progress) string {
	short := ev.Digest
	if len(short) > 19 {
		short = short[:19]
	}
	return fmt.Sprintf("fetching %s %s: %s / %s", redact.URL(ev.Image), short, mib(ev.Done), mib(ev.Total))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// clearLine returns a terminal's cursor to the start of the line and clears the line.
const clearLine = "\r\033[K"

// statusWriter is stderr for plain lines. On a terminal it also shows one transient status
// line (a download's progress): a log line written while it shows clears it first and draws
// it again after, so log lines and progress never mix on one line, and a finished download
// leaves nothing behind. Elsewhere it only passes writes on.
type statusWriter struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	status   string
}

func newStatusWriter(w io.Writer) *statusWriter {
	return &statusWriter{w: w, terminal: isTerminal(w)}
}

// Write writes p (whole lines) above the status line.
func (s *statusWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status != "" {
		_, _ = io.WriteString(s.w, clearLine)
	}
	n, err := s.w.Write(p)
	if s.status != "" {
		_, _ = io.WriteString(s.w, s.status)
	}
	return n, err
}

// progress shows a download as the status line, and clears it when the download ends.
func (s *statusWriter) progress(ev source.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.terminal {
		return
	}
	s.status = progressLine(ev)
	if ev.Finished {
		s.status = ""
	}
	_, _ = io.WriteString(s.w, clearLine+s.status)
}

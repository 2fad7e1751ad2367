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

// progressPrinter shows long blob downloads: a self-updating line on a terminal, and in CI
// (no terminal, or CI set) one plain line when a download starts and one when it ends, so
// logs stay readable.
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	started  map[string]bool
}

// progressFor returns the progress callback for --log-format: with json, progress is log
// records (one when a download starts, one when it ends) so that every stderr line is JSON.
// With -q there is none.
func progressFor(logs *logFlags, w io.Writer, log *slog.Logger) func(source.Progress) {
	if logs.quiet {
		return nil
	}
	if logs.format != "json" {
		return newProgressPrinter(w).report
	}
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

func newProgressPrinter(w io.Writer) *progressPrinter {
	tty := false
	if f, ok := w.(*os.File); ok && os.Getenv("CI") == "" {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progressPrinter{w: w, terminal: tty, started: map[string]bool{}}
}

func (p *progressPrinter) report(ev source.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	short := ev.Digest
	if len(short) > 19 {
		short = short[:19]
	}
	line := fmt.Sprintf("fetching %s %s: %s / %s", redact.URL(ev.Image), short, mib(ev.Done), mib(ev.Total))
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

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Package plainlog writes log records as the plain lines of a kubectl-family tool, for people
// reading stderr: a step that ended is its name and the time it worked ("resolve         29ms"),
// a warning is "Warning: …", anything else (an error record too: the command's one "Error: …"
// line is its final error, which the CLI prints) its message followed by its
// attributes as key=value. No level names, no time stamps, no quoting (scripts read
// --log-format text, logfmt, or json). Warnings of a kind the caller names (Options.Hold) are
// held back and said as one line with their count when there are several (Flush), per set of
// logger attributes (a --branches run's branch).
package plainlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/warntee"
)

// The attributes of a step's records (the rebase's graph of steps): the step's name, what
// happened to it, and the time it worked.
const (
	StepKey  = "phase"
	StateKey = "state"
	TookKey  = "took"
)

// StepWidth is the width the step names are padded to, so the times line up.
const StepWidth = 16

// Options tune a Handler.
type Options struct {
	// Level is the lowest level written (default slog.LevelInfo).
	Level slog.Leveler
	// Hold, when set, names the warnings to hold back until Flush: those of one kind that
	// may come by the dozen (a security review's rules), each of which the caller's result
	// also lists.
	Hold func(text string) bool
	// Summary is the line (after "Warning: ") Flush writes for n held warnings when n > 1;
	// a single held warning is written as it is.
	Summary func(n int) string
}

// Handler is a slog.Handler writing plain lines to one writer. Derived handlers (WithAttrs)
// share the writer and what is held.
type Handler struct {
	out   *output
	attrs []slog.Attr
}

// output is what the handlers of one New share.
type output struct {
	mu   sync.Mutex
	w    io.Writer
	opts Options
	held []heldGroup
}

// heldGroup are the held warnings of the loggers with one set of attributes (With): those of
// one branch of a --branches run are counted apart from another's.
type heldGroup struct {
	attrs string // the loggers' attributes as Text writes them (" branch=main"), or ""
	texts []string
}

// hold keeps text among the warnings held for the loggers with attrs.
func (o *output) hold(attrs, text string) {
	for i := range o.held {
		if o.held[i].attrs == attrs {
			o.held[i].texts = append(o.held[i].texts, text)
			return
		}
	}
	o.held = append(o.held, heldGroup{attrs: attrs, texts: []string{text}})
}

// New returns a handler writing to w.
func New(w io.Writer, opts Options) *Handler {
	if opts.Level == nil {
		opts.Level = slog.LevelInfo
	}
	return &Handler{out: &output{w: w, opts: opts}}
}

// Enabled reports whether records at l are written.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.out.opts.Level.Level()
}

// Handle writes rec as one line, or holds it (Options.Hold).
func (h *Handler) Handle(_ context.Context, rec slog.Record) error {
	line := h.line(rec)
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if isWarning(rec.Level) && o.opts.Hold != nil && o.opts.Hold(line.text) {
		o.hold(warntee.Text(slog.Record{}, h.attrs), line.text)
		return nil
	}
	_, err := io.WriteString(o.w, line.String()+"\n")
	return err
}

// WithAttrs returns a handler whose records carry attrs too.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{out: h.out, attrs: append(slices.Clip(h.attrs), attrs...)}
}

// WithGroup keeps lines flat: plain lines have no nesting.
func (h *Handler) WithGroup(string) slog.Handler { return h }

// Flush writes the held warnings, per set of logger attributes in the order first held (a
// --branches run's branches): one line with their count (Options.Summary) and those
// attributes when there are several, the warning itself when there is one. It is called
// when the command ends.
func (h *Handler) Flush() error {
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	held := o.held
	o.held = nil
	for _, g := range held {
		lines := g.texts
		if len(g.texts) > 1 && o.opts.Summary != nil {
			lines = []string{o.opts.Summary(len(g.texts)) + g.attrs}
		}
		for _, text := range lines {
			if _, err := io.WriteString(o.w, "Warning: "+text+"\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

// line is one record as a line: a prefix ("Warning: " or none) and a text.
type line struct{ prefix, text string }

func (l line) String() string { return l.prefix + l.text }

func isWarning(l slog.Level) bool { return l >= slog.LevelWarn && l < slog.LevelError }

// line renders rec: a step's record as its step line, a warning with its prefix and text
// (warntee.Text: message and attributes), anything else as its text — an error record too,
// never "Error: …": a library's account of a failure comes before the command's own error,
// and a kubectl-family tool prints one "Error:" line, its final error.
func (h *Handler) line(rec slog.Record) line {
	if step, ok := h.stepLine(rec); ok {
		return line{text: step}
	}
	text := warntee.Text(rec, h.attrs)
	if isWarning(rec.Level) {
		return line{prefix: "Warning: ", text: text}
	}
	return line{text: text}
}

// stepLine is the line of a step's record: its name padded to StepWidth, then the time it
// worked and, unless it simply ended, what happened ("stopped", "failed", "drift found"); a
// step that starts is "name started". A record without the step attribute is no step's.
func (h *Handler) stepLine(rec slog.Record) (string, bool) {
	var step, state, took string
	others := []string{}
	visit := func(a slog.Attr) bool {
		switch a.Key {
		case StepKey:
			step = a.Value.String()
		case StateKey:
			state = a.Value.String()
		case TookKey:
			took = a.Value.String()
		default:
			others = append(others, fmt.Sprintf("%s=%v", a.Key, a.Value.Resolve()))
		}
		return true
	}
	for _, a := range h.attrs {
		visit(a)
	}
	rec.Attrs(visit)
	if step == "" || (took == "" && state == "") {
		return "", false
	}
	parts := []string{fmt.Sprintf("%-*s", StepWidth-1, step)}
	if took != "" {
		parts = append(parts, Duration(took))
	}
	switch state {
	case "", "done":
	case "drift":
		parts = append(parts, "drift found")
	case "start":
		parts = append(parts, "started")
	default:
		parts = append(parts, state)
	}
	parts = append(parts, others...)
	return strings.Join(parts, " "), true
}

// Duration shows a duration for people: to the microsecond under a millisecond ("343µs"), to
// the millisecond under a minute ("29ms", "1.868s"), to the second beyond. A value that is
// not a duration is shown as it is.
func Duration(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil {
		return s
	}
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

package rebase

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// warningTee is the slog handler the image source logs through: every record passes to the
// run's own handler unchanged, and a warning is also recorded in Result.Warnings, so that what
// the registry code warns about (retries, an unwritable cache) reaches the summary, -o json and
// the PR body as the run's own warnings do. It records at the source, from the structured
// record, never by reading what was printed.
type warningTee struct {
	inner  slog.Handler
	attrs  []slog.Attr
	record func(string)
}

func (h warningTee) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h warningTee) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		h.record(warningText(rec, h.attrs))
	}
	if !h.inner.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.inner.Handle(ctx, rec)
}

func (h warningTee) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warningTee{inner: h.inner.WithAttrs(attrs), attrs: append(slices.Clip(h.attrs), attrs...), record: h.record}
}

// WithGroup keeps the recorded text flat: the source logs no groups.
func (h warningTee) WithGroup(name string) slog.Handler {
	return warningTee{inner: h.inner.WithGroup(name), attrs: h.attrs, record: h.record}
}

// warningText is the message followed by its attributes as key=value, in logging order.
func warningText(rec slog.Record, pre []slog.Attr) string {
	var b strings.Builder
	b.WriteString(rec.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Resolve())
		return true
	}
	for _, a := range pre {
		add(a)
	}
	rec.Attrs(add)
	return b.String()
}

// recordWarning adds a warning once: the runner itself warns about some of what the source
// reports (the lagging LVMS minor), and a reader needs each warning once.
func (r *runner) recordWarning(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.result.Warnings, msg) {
		r.result.Warnings = append(r.result.Warnings, msg)
	}
}

// sourceLogger is the source's logger with its warnings recorded in the run's result.
func (r *runner) sourceLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return slog.New(warningTee{inner: l.Handler(), record: r.recordWarning})
}

// Package warntee records warnings where they are logged: a slog handler that passes every
// record on unchanged and also hands each warning (as its message followed by its attributes)
// to a callback. The rebase logs the image source through it, so that what the registry code
// warns about (retries, an unwritable cache) reaches the run's result, -o json and the PR body
// as the run's own warnings do: recorded from the structured record, never read back from
// what was printed.
package warntee

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// New returns a handler that passes records to inner and calls record with the text of each
// record at slog.LevelWarn or above, whatever inner's level.
func New(inner slog.Handler, record func(string)) slog.Handler {
	return handler{inner: inner, record: record}
}

// handler passes every record to inner unchanged and hands each warning's text to record.
type handler struct {
	inner  slog.Handler
	attrs  []slog.Attr
	record func(string)
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h handler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		h.record(warningText(rec, h.attrs))
	}
	if !h.inner.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.inner.Handle(ctx, rec)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{inner: h.inner.WithAttrs(attrs), attrs: append(slices.Clip(h.attrs), attrs...), record: h.record}
}

// WithGroup keeps the recorded text flat: the source logs no groups.
func (h handler) WithGroup(name string) slog.Handler {
	return handler{inner: h.inner.WithGroup(name), attrs: h.attrs, record: h.record}
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

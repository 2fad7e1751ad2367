// Package warntee handles the warnings among log records: New hands each warning's text to a
// callback while passing every record on unchanged, Once passes each distinct warning on only
// the first time, and Text is the one rule for a warning's text (its message followed by its
// attributes). The rebase logs the image source through New, so that what the registry code
// warns about (retries, an unwritable cache) reaches the run's result, -o json and the PR body
// as the run's own warnings do: recorded from the structured record, never read back from
// what was printed. The CLI logs through Once, so that a warning said by several parallel
// fetches, retries or steps is printed once.
package warntee

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
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
		h.record(Text(rec, h.attrs))
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

// Text is a record's message followed by its attributes as key=value, those of the logger
// (pre, from With) first, in logging order: the text of a warning wherever it is recorded,
// compared or printed.
func Text(rec slog.Record, pre []slog.Attr) string {
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

// Once returns a handler that passes records to inner, except a warning (slog.LevelWarn up
// to, not including, slog.LevelError) whose text (Text) it passed on before: each distinct warning is printed once, the
// first time it is logged, however many parallel fetches, retries or steps say it. Loggers
// derived from it (With) share what was seen.
func Once(inner slog.Handler) slog.Handler {
	return onceHandler{inner: inner, seen: &seen{texts: map[string]bool{}}}
}

// seen are the warning texts passed on so far.
type seen struct {
	mu    sync.Mutex
	texts map[string]bool
}

// first reports whether text is seen for the first time, and remembers it.
func (s *seen) first(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts[text] {
		return false
	}
	s.texts[text] = true
	return true
}

type onceHandler struct {
	inner slog.Handler
	attrs []slog.Attr
	seen  *seen
}

func (h onceHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h onceHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn && rec.Level < slog.LevelError && !h.seen.first(Text(rec, h.attrs)) {
		return nil
	}
	return h.inner.Handle(ctx, rec)
}

func (h onceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return onceHandler{inner: h.inner.WithAttrs(attrs), attrs: append(slices.Clip(h.attrs), attrs...), seen: h.seen}
}

func (h onceHandler) WithGroup(name string) slog.Handler {
	return onceHandler{inner: h.inner.WithGroup(name), attrs: h.attrs, seen: h.seen}
}

package rebase

import (
	"log/slog"
	"slices"

	"github.com/lvms-rebase/lvms-rebase/internal/warntee"
)

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
	return slog.New(warntee.New(l.Handler(), r.recordWarning))
}

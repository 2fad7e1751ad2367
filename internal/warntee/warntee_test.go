package warntee

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestHandler: warnings and errors are recorded with their attributes whatever the inner
// handler's level; every record the inner handler enables is printed unchanged.
func TestHandler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		level   slog.Level
		log     func(*slog.Logger)
		records []string
		printed string
	}{
		{"warning recorded and printed", slog.LevelInfo, func(l *slog.Logger) { l.With("registry", "quay.io").Warn("retrying", "attempt", 2) },
			[]string{"retrying registry=quay.io attempt=2"}, `level=WARN msg=retrying registry=quay.io attempt=2`},
		{"quiet inner still records", slog.LevelError, func(l *slog.Logger) { l.Warn("cache unwritable") },
			[]string{"cache unwritable"}, ""},
		{"info passes, not recorded", slog.LevelInfo, func(l *slog.Logger) { l.Info("fetching") }, nil, "level=INFO msg=fetching"},
		{"debug dropped", slog.LevelInfo, func(l *slog.Logger) { l.Debug("detail") }, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var got []string
			inner := slog.NewTextHandler(&out, &slog.HandlerOptions{Level: tc.level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})
			tc.log(slog.New(New(inner, func(s string) { got = append(got, s) })))
			if strings.Join(got, "|") != strings.Join(tc.records, "|") || strings.TrimSpace(out.String()) != tc.printed {
				t.Errorf("recorded %q, printed %q; want %q, %q", got, out.String(), tc.records, tc.printed)
			}
		})
	}
}

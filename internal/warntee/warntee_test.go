package warntee

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
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

// TestOnce: each distinct warning (message and attributes, the logger's included: a With
// logger's attribute comes first, as Text writes it) is passed on once, the first time, also
// when loggers derived with With and many goroutines say it; other records, errors included,
// are never dropped.
func TestOnce(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	inner := slog.NewTextHandler(&lockedWriter{w: &out, mu: &mu}, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	log := slog.New(Once(inner))
	log.Warn("CSV suggests namespace a; using b")
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Warn("retrying request", "url", "https://quay.io/v2/", "attempt", 1)
			log.With("url", "https://quay.io/v2/").Warn("retrying request", "attempt", 1)
			log.Info("fetching")
		}()
	}
	wg.Wait()
	log.Warn("CSV suggests namespace a; using b")
	log.Warn("retrying request", "url", "https://quay.io/v2/", "attempt", 2)
	log.Error("failed")
	log.Error("failed")
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	var warnings, infos, errs []string
	for _, l := range got {
		switch {
		case strings.HasPrefix(l, "level=WARN"):
			warnings = append(warnings, l)
		case strings.HasPrefix(l, "level=INFO"):
			infos = append(infos, l)
		case strings.HasPrefix(l, "level=ERROR"):
			errs = append(errs, l)
		}
	}
	want := []string{
		`level=WARN msg="CSV suggests namespace a; using b"`,
		`level=WARN msg="retrying request" url=https://quay.io/v2/ attempt=1`,
		`level=WARN msg="retrying request" url=https://quay.io/v2/ attempt=2`,
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if len(infos) != 20 || len(errs) != 2 {
		t.Errorf("%d info and %d error records; want 20 and 2 (only warnings are made distinct)", len(infos), len(errs))
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

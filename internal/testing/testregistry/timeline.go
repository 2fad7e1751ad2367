package testregistry

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Event is one request as the client saw it on the modelled network: when it arrived
// (before the network's delay), when its response was complete, and the body bytes.
type Event struct {
	Method string
	Path   string
	Status int
	Start  time.Time
	End    time.Time
	Bytes  int64
}

// Timeline returns the requests since the last ResetStats, in arrival order: which ones
// overlapped and which waited for another is what a benchmark reads from it.
func (r *Registry) Timeline() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Event(nil), r.events...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// WriteTimeline prints events as one line per request: its start and end in milliseconds
// from the first request's start, the method, status, bytes and path.
func WriteTimeline(w io.Writer, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	var b strings.Builder
	t0 := events[0].Start
	ms := func(t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }
	fmt.Fprintf(&b, "%9s %9s %-6s %3s %10s %s\n", "start ms", "end ms", "method", "st", "bytes", "path")
	for _, e := range events {
		fmt.Fprintf(&b, "%9.1f %9.1f %-6s %3d %10d %s\n", ms(e.Start), ms(e.End), e.Method, e.Status, e.Bytes, e.Path)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// timeline records every request, outside the network model so that a request's start is
// when the client sent it.
func (r *Registry) timeline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(cw, req)
		e := Event{Method: req.Method, Path: req.URL.Path, Status: cw.status, Start: start, End: time.Now(), Bytes: cw.n}
		if e.Status == 0 {
			e.Status = http.StatusOK
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	})
}

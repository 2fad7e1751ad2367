package testregistry

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Network models a registry far away, on loopback: every request waits Delay before it is
// answered (one round trip), and all response bodies share one link of BytesPerSecond
// (0: unlimited). Benchmarks use it so that round trips and bytes cost what they cost on
// a real network; tests leave it off.
type Network struct {
	Delay          time.Duration
	BytesPerSecond int64
}

// network applies the current Network to every response.
type network struct {
	mu      sync.RWMutex
	model   Network
	limiter *rate.Limiter
}

// chunk is the largest write charged to the link at once; small enough that parallel
// downloads interleave, large enough to keep the limiter cheap.
const chunk = 16 << 10

func newNetwork(m Network) *network {
	n := &network{}
	n.set(m)
	return n
}

func (n *network) set(m Network) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.model, n.limiter = m, nil
	if m.BytesPerSecond > 0 {
		n.limiter = rate.NewLimiter(rate.Limit(m.BytesPerSecond), chunk)
	}
}

func (n *network) get() (Network, *rate.Limiter) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.model, n.limiter
}

// SetNetwork changes the network model for requests that start from now on (a bench pushes
// its fixtures at loopback speed, then measures under the model).
func (r *Registry) SetNetwork(m Network) { r.network.set(m) }

func (n *network) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		m, lim := n.get()
		if m.Delay > 0 {
			t := time.NewTimer(m.Delay)
			select {
			case <-req.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if lim != nil {
			w = &throttledWriter{ResponseWriter: w, lim: lim, req: req}
		}
		next.ServeHTTP(w, req)
	})
}

// throttledWriter charges every body byte to the shared link.
type throttledWriter struct {
	http.ResponseWriter
	lim *rate.Limiter
	req *http.Request
}

func (t *throttledWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n := min(len(b), chunk)
		if err := t.lim.WaitN(t.req.Context(), n); err != nil {
			return written, err
		}
		m, err := t.ResponseWriter.Write(b[:n])
		written += m
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

func (t *throttledWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *throttledWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

package testregistry

import (
	"net/http"
	"sort"
	"strings"
)

type statKey struct{ method, path string }

// PathStats counts the requests to one method and URL path and the response body bytes
// written to clients. Request bodies (pushes) are not counted, nor the partial body of a
// FaultTruncate response, which bypasses the writer.
type PathStats struct {
	Method   string
	Path     string
	Requests int
	Bytes    int64
}

// Stats is a snapshot of the request counters, sorted by path then method.
type Stats struct {
	Paths []PathStats
}

// Requests counts requests whose method equals method (any when "") and whose path
// contains substr.
func (s Stats) Requests(method, substr string) int {
	n := 0
	for _, p := range s.Paths {
		if (method == "" || p.Method == method) && strings.Contains(p.Path, substr) {
			n += p.Requests
		}
	}
	return n
}

// BytesFor sums body bytes of requests whose path contains substr.
func (s Stats) BytesFor(substr string) int64 {
	var n int64
	for _, p := range s.Paths {
		if strings.Contains(p.Path, substr) {
			n += p.Bytes
		}
	}
	return n
}

// BlobGETs counts GET requests for blobs.
func (s Stats) BlobGETs() int { return s.Requests(http.MethodGet, "/blobs/sha256:") }

// ManifestGETs counts GET requests for manifests (by tag or digest).
func (s Stats) ManifestGETs() int { return s.Requests(http.MethodGet, "/manifests/") }

// Bytes sums the body bytes of every response.
func (s Stats) Bytes() int64 { return s.BytesFor("") }

// Stats returns a snapshot of the counters.
func (r *Registry) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Stats{Paths: make([]PathStats, 0, len(r.stats))}
	for _, p := range r.stats {
		out.Paths = append(out.Paths, *p)
	}
	sort.Slice(out.Paths, func(i, j int) bool {
		if out.Paths[i].Path != out.Paths[j].Path {
			return out.Paths[i].Path < out.Paths[j].Path
		}
		return out.Paths[i].Method < out.Paths[j].Method
	})
	return out
}

// ResetStats zeroes the counters and empties the timeline.
func (r *Registry) ResetStats() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = map[statKey]*PathStats{}
	r.events = nil
}

func (r *Registry) record(method, path string, requests int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := statKey{method, path}
	p, ok := r.stats[k]
	if !ok {
		p = &PathStats{Method: method, Path: path}
		r.stats[k] = p
	}
	p.Requests += requests
	p.Bytes += bytes
}

// countingWriter counts body bytes and remembers the status; it keeps Hijack reachable for
// fault injection.
type countingWriter struct {
	http.ResponseWriter
	n      int64
	status int
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *Registry) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		r.record(req.Method, req.URL.Path, 1, 0)
		next.ServeHTTP(cw, req)
		r.record(req.Method, req.URL.Path, 0, cw.n)
	})
}

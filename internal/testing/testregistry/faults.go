package testregistry

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// FaultKind selects how a matching request fails.
type FaultKind int

// Fault kinds.
const (
	// FaultStatus answers with Fault.Status (default 500) and a registry error body.
	FaultStatus FaultKind = iota + 1
	// FaultRetryAfter answers 429 Too Many Requests with Retry-After: Fault.RetryAfter seconds.
	FaultRetryAfter
	// FaultReset closes the TCP connection with a reset before any response byte.
	FaultReset
	// FaultTruncate sends the real headers (full Content-Length) and half the body, then
	// closes the connection.
	FaultTruncate
	// FaultCorrupt sends the real response with bytes of the body flipped; length and
	// headers (including Docker-Content-Digest) are unchanged, so only digest
	// verification catches it.
	FaultCorrupt
	// FaultStall accepts the request and answers nothing until the client gives up (or the
	// registry closes): a registry that hangs.
	FaultStall
	// FaultSelfLink answers a tags/list request with the real page and a Link header
	// pointing back at the same page: pagination that never ends.
	FaultSelfLink
	// FaultEndlessPages answers every tags/list request with a page of new tags and a Link
	// to yet another distinct page.
	FaultEndlessPages
	// FaultHugeTagList answers a tags/list request with one page of Fault.Size bytes of tags,
	// streamed (the registry does not hold it in memory).
	FaultHugeTagList
	// FaultWrongDigest answers a manifest request by digest with a valid image manifest of
	// about Fault.Size bytes whose digest is not the requested one, under the requested
	// Docker-Content-Digest: a registry serving other bytes than it claims.
	FaultWrongDigest
	// FaultPause sends the real response's first Fault.Size bytes (default half), then holds
	// the rest until Fault.Release is closed (or the client goes away): a download that is
	// still under way while the client has its first bytes.
	FaultPause
	// FaultRedirect answers 307 Temporary Redirect to Fault.Location, or to the request's own
	// URL when Location is empty: a redirect loop, or a hop to another host.
	FaultRedirect
	// FaultHugeBody answers 200 with Fault.Size bytes of zeros, streamed under their
	// Content-Length (a signature store serving a gigabyte under a signature's name).
	FaultHugeBody
)

func (k FaultKind) String() string {
	switch k {
	case FaultStatus:
		return "status"
	case FaultRetryAfter:
		return "retry-after"
	case FaultReset:
		return "reset"
	case FaultTruncate:
		return "truncate"
	case FaultCorrupt:
		return "corrupt"
	case FaultStall:
		return "stall"
	case FaultSelfLink:
		return "self-link"
	case FaultEndlessPages:
		return "endless-pages"
	case FaultHugeTagList:
		return "huge-tag-list"
	case FaultWrongDigest:
		return "wrong-digest"
	case FaultPause:
		return "pause"
	case FaultRedirect:
		return "redirect"
	case FaultHugeBody:
		return "huge-body"
	}
	return "FaultKind(" + strconv.Itoa(int(k)) + ")"
}

// Fault makes matching requests fail. A request matches when its method equals Method
// (any when empty) and its URL path contains Path (any when empty).
type Fault struct {
	Method string
	Path   string
	Kind   FaultKind
	// Status is the code for FaultStatus; default 500.
	Status int
	// RetryAfter is the Retry-After value in seconds for FaultRetryAfter.
	RetryAfter int
	// Count is how many matching requests fail before the fault passes requests through;
	// 0 means every matching request fails.
	Count int
	// Size is the body size in bytes of FaultHugeTagList and FaultWrongDigest (default 1 MiB),
	// and the bytes FaultPause sends before it holds the rest.
	Size int64
	// Body, for FaultTruncate, is sent (half of it) in place of the real response body: a
	// first attempt that delivered other content than the retry will.
	Body []byte
	// Release ends FaultPause's hold.
	Release <-chan struct{}
	// Location is where FaultRedirect sends the client (default: the request's own URL).
	Location string
}

type activeFault struct {
	Fault
	hits int
}

// Inject adds a fault; faults are tried in the order injected and the first live match wins.
func (r *Registry) Inject(f Fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, &activeFault{Fault: f})
}

// ClearFaults removes every fault.
func (r *Registry) ClearFaults() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = nil
}

// FaultHits returns how many requests injected faults have failed so far.
func (r *Registry) FaultHits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, f := range r.faults {
		n += f.hits
	}
	return n
}

func (r *Registry) match(req *http.Request) *Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, req.Method) {
			continue
		}
		if f.Path != "" && !strings.Contains(req.URL.Path, f.Path) {
			continue
		}
		if f.Count > 0 && f.hits >= f.Count {
			continue
		}
		f.hits++
		cp := f.Fault
		return &cp
	}
	return nil
}

func (r *Registry) inject(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		f := r.match(req)
		if f == nil {
			next.ServeHTTP(w, req)
			return
		}
		r.opts.Logf("testregistry: fault %s on %s %s", f.Kind, req.Method, req.URL.Path)
		switch f.Kind {
		case FaultStall:
			select {
			case <-req.Context().Done():
			case <-time.After(10 * time.Minute):
			}
		case FaultStatus:
			code := f.Status
			if code == 0 {
				code = http.StatusInternalServerError
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"errors":[{"code":"UNKNOWN","message":"injected fault: status %d"}]}`, code)
		case FaultRetryAfter:
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"errors":[{"code":"TOOMANYREQUESTS","message":"injected fault: rate limited"}]}`)
		case FaultReset:
			conn, _, err := hijack(w)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				// Linger 0 makes Close send RST instead of FIN: a reset, not an EOF.
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
		case FaultSelfLink, FaultEndlessPages, FaultHugeTagList, FaultWrongDigest, FaultHugeBody:
			r.hostile(w, req, f, next)
		case FaultPause:
			r.pause(w, req, f, next)
		case FaultRedirect:
			loc := f.Location
			if loc == "" {
				loc = req.URL.RequestURI()
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusTemporaryRedirect)
		case FaultTruncate, FaultCorrupt:
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if f.Body != nil {
				body = f.Body
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			if f.Kind == FaultCorrupt {
				body = append([]byte(nil), body...)
				for i := len(body) / 2; i < len(body) && i < len(body)/2+16; i++ {
					body[i] ^= 0xff
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
				return
			}
			r.truncate(w, rec, body)
		default:
			http.Error(w, "unknown injected fault kind "+f.Kind.String(), http.StatusInternalServerError)
		}
	})
}

// truncate writes the status line and headers promising the full body by hand, sends
// half of it and closes the connection, so the client sees an unexpected EOF.
func (r *Registry) truncate(w http.ResponseWriter, rec *httptest.ResponseRecorder, body []byte) {
	conn, buf, err := hijack(w)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
	h := rec.Header().Clone()
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Connection", "close")
	_ = h.Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(body[:len(body)/2])
	_ = buf.Flush()
}

// pause sends the real response's first f.Size bytes (default half) and holds the rest until
// f.Release is closed or the client goes away.
func (r *Registry) pause(w http.ResponseWriter, req *http.Request, f *Fault, next http.Handler) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	n := int64(len(body) / 2)
	if f.Size > 0 && f.Size < int64(len(body)) {
		n = f.Size
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body[:n])
	// Through the wrappers (timeline, network model), whose Unwrap the controller follows.
	_ = http.NewResponseController(w).Flush()
	select {
	case <-f.Release:
	case <-req.Context().Done():
		return
	}
	_, _ = w.Write(body[n:])
}

func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
	for {
		if hj, ok := w.(http.Hijacker); ok {
			return hj.Hijack()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil, nil, fmt.Errorf("response writer %T cannot be hijacked", w)
		}
		w = u.Unwrap()
	}
}

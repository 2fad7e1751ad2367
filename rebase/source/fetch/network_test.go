package fetch

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// countingTransport counts dials.
func countingTransport(dials *atomic.Int32) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}}
}

// resetServer accepts connections and resets each at once (SO_LINGER 0).
func resetServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// A server that misbehaves on purpose: what it reads and whether the reset
			// succeeds do not matter, the client's error does.
			buf := make([]byte, 1024)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(buf)
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	return l.Addr().String()
}

// TestOneRetryBudgetPerRequest: a reset is retried Attempts times in all (not Attempts²),
// and the error says how many attempts were really made.
func TestOneRetryBudgetPerRequest(t *testing.T) {
	addr := resetServer(t)
	var dials atomic.Int32
	o := Options{Retry: transport.RetryOptions{Attempts: 3, Backoff: time.Millisecond}}
	base := countingTransport(&dials)
	_, err := newClient(t, o, base).FetchURL(context.Background(), "http://"+addr+"/o/r/archive/x.tar.gz")
	if err == nil {
		t.Fatal("reset connection: no error")
	}
	if n := dials.Load(); n != 3 {
		t.Errorf("FetchURL: %d connections for Attempts 3, want 3 (%v)", n, err)
	}
	if !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("error does not state the real attempt count: %v", err)
	}
	dials.Store(0)
	_, err = newClient(t, o, base).ImageDigests(context.Background(), addr+"/repo@sha256:"+strings.Repeat("a", 64), []string{"x86_64"})
	if err == nil {
		t.Fatal("registry reset: no error")
	}
	// ggcr's ping tries https, then http on a loopback host: two requests, one budget each.
	if n := dials.Load(); n > 6 {
		t.Errorf("ImageDigests: %d connections for Attempts 3, want at most 6 (two requests) (%v)", n, err)
	}
}

// TestRefusedConnectionFailsFast: nothing listening is not worth a retry.
func TestRefusedConnectionFailsFast(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	var dials atomic.Int32
	o := Options{Retry: transport.RetryOptions{Attempts: 5, Backoff: 200 * time.Millisecond}}
	base := countingTransport(&dials)
	start := time.Now()
	_, err := newClient(t, o, base).ImageDigests(context.Background(), addr+"/repo:tag", []string{"x86_64"})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want connection refused", err)
	}
	// HEAD then GET, each pinging https then http on loopback: four dials, no retries.
	if n, d := dials.Load(), time.Since(start); n > 4 || d > 2*time.Second {
		t.Errorf("refused connection: %d dials in %s, want at most 4 and well under 2s", n, d)
	}
	dials.Store(0)
	if _, err := newClient(t, o, base).FetchURL(context.Background(), "http://"+addr+"/x.tar.gz"); err == nil || dials.Load() != 1 {
		t.Errorf("FetchURL refused: %d dials, err %v", dials.Load(), err)
	}
}

// stallServer accepts and reads the request; with headers set it sends them and then
// stalls the body, otherwise it never answers.
func stallServer(t *testing.T, headers bool) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// The request is read only to be answered (or not); the test is the client's error.
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				if headers {
					_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial"))
				}
				<-done
			}()
		}
	}()
	return l.Addr().String()
}

// TestStalledRequestTimesOut: a server that accepts and stalls (before the headers or in the
// body) fails after the per-request stall timeout, not at the overall --timeout, and the
// error says so and names the URL.
func TestStalledRequestTimesOut(t *testing.T) {
	for _, headers := range []bool{false, true} {
		addr := stallServer(t, headers)
		o := Options{Retry: transport.RetryOptions{Attempts: 2, Backoff: time.Millisecond, StallTimeout: 300 * time.Millisecond}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		_, err := newClient(t, o, nil).FetchURL(ctx, "http://"+addr+"/o/r/archive/x.tar.gz")
		cancel()
		if err == nil || !strings.Contains(err.Error(), "no data for 300ms") || !strings.Contains(err.Error(), addr) {
			t.Errorf("headers=%v: err = %v, want a stall error naming the URL", headers, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("headers=%v: took %s", headers, d)
		}
	}
}

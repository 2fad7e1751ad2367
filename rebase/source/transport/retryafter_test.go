package transport

import (
	"testing"
	"time"
)

// A huge Retry-After must be capped, not overflow into "retry at once".
func TestRetryAfterHuge(t *testing.T) {
	for _, h := range []string{"9223372037", "18446744074", "99999999999999999999"} {
		d, ok := RetryAfter(h, 30*time.Second)
		if h == "99999999999999999999" && !ok {
			continue // not an integer at all: ignored like any garbage
		}
		if !ok || d != 30*time.Second {
			t.Errorf("RetryAfter(%q) = %v, %v; want the 30s cap", h, d, ok)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	if d, ok := RetryAfter("2", time.Minute); !ok || d != 2*time.Second {
		t.Fatalf("seconds: %v %v", d, ok)
	}
	if d, ok := RetryAfter("3600", time.Second); !ok || d != time.Second {
		t.Fatalf("cap: %v", d)
	}
	if d, ok := RetryAfter(time.Now().Add(time.Hour).UTC().Format(http1123), 5*time.Second); !ok || d != 5*time.Second {
		t.Fatalf("date: %v %v", d, ok)
	}
	if _, ok := RetryAfter("soon", time.Second); ok {
		t.Fatal("garbage accepted")
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

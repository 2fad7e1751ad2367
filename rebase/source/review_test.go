package source

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestFetchURLNeverEchoesPassword covers URLs url.Parse accepts (errors use URL.Redacted)
// and ones it rejects (its error would repeat the raw string).
func TestFetchURLNeverEchoesPassword(t *testing.T) {
	const secret = "hunter2"
	var logs bytes.Buffer
	o := Options{CacheDir: t.TempDir(), Retry: RetryOptions{Attempts: 2, Backoff: time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, u := range []string{
		"https://user:" + secret + "@127.0.0.1:1/x.tar.gz",             // connection refused
		"http://user:" + secret + "@example.com/x.tar.gz",              // plain http refused
		"ftp://user:" + secret + "@example.com/x",                      // scheme refused
		"https://user:" + secret + "@example.com/%zz",                  // bad escape
		"https://user:" + secret + "@[::1/x",                           // bad host
		" https://user:" + secret + "@example.com/x",                   // leading space
		"https://user:" + secret + "/x@example.com/archive/abc.tar.gz", // '/' in the password
		"user:" + secret + "@example.com/x",                            // no scheme
	} {
		for _, offline := range []bool{false, true} {
			o.Offline = offline
			_, err := newSource(t, o).FetchURL(ctx(t), u)
			if err == nil {
				t.Fatalf("FetchURL(%q) succeeded", u)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("offline=%v: FetchURL(%q) error leaks the password: %v", offline, u, err)
			}
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("log leaks the password:\n%s", logs.String())
	}
}

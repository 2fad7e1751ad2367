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

func TestPickBundleTagIndependentOfTagOrder(t *testing.T) {
	tags := []string{"v4.17.3-010", "v4.17.3-10", "v4.17.3-9", "V4.17.9", "4.17.9", "v4.17.9-rc1"}
	for i := range tags {
		// Every rotation of the registry's order must give the same answer.
		rot := append(append([]string(nil), tags[i:]...), tags[:i]...)
		got, err := PickBundleTag(rot, "4.17", "repo")
		if err != nil || got != "v4.17.3-10" {
			t.Errorf("order %v: got %q, %v; want v4.17.3-10", rot, got, err)
		}
	}
}

func TestPickPayloadVersionExplainsEmptyMinor(t *testing.T) {
	tests := []struct {
		name string
		tags []string
		want []string
	}{
		{"multi only", []string{"4.18.5-multi", "4.18.4-multi", "4.17.1-x86_64"},
			[]string{"4.18 has tags for multi only", "--ocp-release repo:X.Y.Z-<suffix>"}},
		{"pre-release only", []string{"4.19.0-ec.2-x86_64", "4.19.0-rc.1-x86_64", "4.19.0-rc.1-aarch64"},
			[]string{"only pre-release tags", "e.g. 4.19.0-rc.1-x86_64", "--allow-prerelease"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			minor := tc.tags[0][:4]
			_, err := PickPayloadVersion(tc.tags, minor, []string{"x86_64", "aarch64"}, false, "repo")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

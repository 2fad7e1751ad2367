package redact

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Canary secrets with the characters that break pattern scrubbing and net/url: spaces,
// quotes, angle brackets, "#", ";", "@", "/", ":".
var canaries = []string{`cu ser"<x>`, `cp#a;s@s/w:d`, `ct "o'k<e>n#;@`, "cf#rag", "cpa;ram"}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://host:6443/api", "https://host:6443/api"},
		{"quay.io/x/y:4.18.0-x86_64", "quay.io/x/y:4.18.0-x86_64"},
		{"quay.io/x@sha256:0123abcd", "quay.io/x@sha256:0123abcd"},
		{"busybox:latest@sha256:0123abcd", "busybox:latest@sha256:0123abcd"},
		{"oci:/some/dir:tag", "oci:/some/dir:tag"},
		{"http://user:pass@host:8080/a/b.tar.gz?token=tok&x=1", "http://xxxxx@host:8080/a/b.tar.gz?token=xxxxx&x=xxxxx"},
		{"https://u:p/w@host/x", "https://xxxxx@host/x"},
		{"user:pass@127.0.0.1:5000/repo:tag", "xxxxx@127.0.0.1:5000/repo:tag"},
		{"u:p@host/repo@sha256:0a1b", "xxxxx@host/repo@sha256:0a1b"},
		{"https://host/a;token=t/b;c?k#frag", "https://host/a;xxxxx/b;xxxxx?xxxxx#xxxxx"},
		{"https://us#er:pw@host/x", "https://xxxxx"},
		{"https://host/x?mail=a@b", "https://xxxxx"},
		{"https://host:6443/api?timeout=32s", "https://host:6443/api?timeout=xxxxx"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestCanaries places each canary in the user info, the query, the fragment and a path
// parameter of URLs and references; neither URL, Strip nor an error through Err keeps it.
func TestCanaries(t *testing.T) {
	for _, c := range canaries {
		for _, in := range []string{
			"https://" + c + ":" + c + "@host:1/p/{commit}.tar.gz",
			"https://" + c + "@host:1/p",
			c + ":" + c + "@host:1/repo:tag",
			c + "@host:1/repo@sha256:0123",
			"docker://" + c + "@host/repo:tag",
			"https://host/p?token=" + c + "&a=" + c,
			"https://host/p?" + c,
			"https://host/p#" + c,
			"https://host/p;" + c + "/q",
			"https://host/p;tok=" + c + "?x=1#" + c,
		} {
			for name, got := range map[string]string{"URL": URL(in), "Strip": Strip(in)} {
				if leaks(got) {
					t.Errorf("%s(%q) = %q keeps a canary", name, in, got)
				}
			}
			_, perr := url.Parse(in)
			err := Err(fmt.Errorf("wrapped: %w", errors.Join(errors.New("x"), &url.Error{Op: "Get", URL: in, Err: errors.New("refused")})))
			for _, e := range []error{Err(perr), err} {
				if e != nil && leaks(e.Error()) {
					t.Errorf("Err of %q: %q keeps a canary", in, e)
				}
			}
			masked := in
			for _, s := range Secrets(in) {
				masked = strings.ReplaceAll(masked, s, Mask)
			}
			if leaks(masked) {
				t.Errorf("Secrets(%q) misses a canary: %q", in, masked)
			}
		}
	}
}

func leaks(s string) bool {
	for _, c := range canaries {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

func TestStrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://canary-user:canary-pass@127.0.0.1:1/github.com/o/r/archive/{commit}.tar.gz?token=canary-token", "http://127.0.0.1:1/github.com/o/r/archive/{commit}.tar.gz"},
		{"/some/dir", "/some/dir"},
		{"https://host/a;p=1/b#f", "https://host/a/b"},
		{"u:p@host/repo:tag", "host/repo:tag"},
	} {
		if got := Strip(tc.in); got != tc.want {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHeader: every header that may carry a credential is masked (a canary never survives),
// the scheme of an authorization stays, URLs keep their path, challenges and other headers
// stay as they are.
func TestHeader(t *testing.T) {
	for _, c := range canaries {
		for _, name := range []string{"Authorization", "authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
			"X-Registry-Auth", "X-Auth-Token", "X-Amz-Security-Token", "X-Api-Key", "X-Session-Id", "X-Amz-Signature",
			"X-Credentials", "X-Password"} {
			for _, v := range []string{c, "Bearer " + c, "Basic " + c, " Bearer " + c} {
				if got := Header(name, v); leaks(got) {
					t.Errorf("Header(%q, %q) = %q keeps a canary", name, v, got)
				}
			}
		}
		for _, name := range []string{"Location", "Content-Location", "Referer"} {
			v := "https://bucket.example/blobs/sha256:0a?X-Amz-Credential=" + c + "&X-Amz-Signature=" + c
			if got := Header(name, v); leaks(got) || !strings.HasPrefix(got, "https://") {
				t.Errorf("Header(%q, %q) = %q", name, v, got)
			}
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"Authorization", "Bearer abc.def", "Bearer " + Mask},
		{"Authorization", "Basic dXNlcjpwdw==", "Basic " + Mask},
		{"Authorization", "abc", Mask},
		{"Www-Authenticate", `Bearer realm="https://auth.example/token",service="quay.io",scope="repository:a/b:pull"`,
			`Bearer realm="https://auth.example/token",service="quay.io",scope="repository:a/b:pull"`},
		{"Content-Type", "application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.manifest.v1+json"},
		{"Docker-Content-Digest", "sha256:0a1b", "sha256:0a1b"},
		{"Location", "https://bucket.example/blobs/sha256:0a?X-Amz-Signature=abc", "https://bucket.example/blobs/sha256:0a?X-Amz-Signature=" + Mask},
		{"Link", `</v2/a/tags/list?n=100&last=v4.18.0>; rel="next"`, `</v2/a/tags/list?n=xxxxx&last=xxxxx`}, // the query runs to the end,
	} {
		if got := Header(tc.name, tc.in); got != tc.want {
			t.Errorf("Header(%q, %q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

package redact

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"GET http://user:pass@host:8080/a/b.tar.gz?token=tok&x=1 failed", "GET http://xxxxx@host:8080/a/b.tar.gz?token=xxxxx&x=xxxxx failed"},
		{`parse "https://u:p/w@host/x": invalid`, `parse "https://xxxxx@host/x": invalid`},
		{"could not parse reference: user:pass@127.0.0.1:5000/repo:tag", "could not parse reference: xxxxx@127.0.0.1:5000/repo:tag"},
		{"--mirror 'quay.io=u:p@mirror.local/x'", "--mirror 'quay.io=xxxxx@mirror.local/x'"},
		{"quay.io/x@sha256:0123abcd stays", "quay.io/x@sha256:0123abcd stays"},
		{"busybox:latest@sha256:0123abcd stays", "busybox:latest@sha256:0123abcd stays"},
		{"oci://host/x@sha256:0a stays", "oci://host/x@sha256:0a stays"},
		{"https://token@github.com/x", "https://xxxxx@github.com/x"},
		{"https://host:6443/api?timeout=32s", "https://host:6443/api?timeout=xxxxx"},
		{"plain text, no secrets: 4.17 quay.io/a/b:4.17.3-x86_64", "plain text, no secrets: 4.17 quay.io/a/b:4.17.3-x86_64"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestURLAndStrip(t *testing.T) {
	raw := "http://canary-user:canary-pass@127.0.0.1:1/github.com/o/r/archive/{commit}.tar.gz?token=canary-token"
	for name, got := range map[string]string{"URL": URL(raw), "Strip": Strip(raw)} {
		for _, s := range []string{"canary-user", "canary-pass", "canary-token"} {
			if strings.Contains(got, s) {
				t.Errorf("%s(%q) = %q keeps %s", name, raw, got, s)
			}
		}
	}
	if got, want := Strip(raw), "http://127.0.0.1:1/github.com/o/r/archive/{commit}.tar.gz"; got != want {
		t.Errorf("Strip = %q, want %q", got, want)
	}
	if got := Strip("/some/dir"); got != "/some/dir" {
		t.Errorf("Strip(dir) = %q", got)
	}
}

func TestTextBareToken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"canary-token@mirror.local/rh": bad`, `"xxxxx@mirror.local/rh": bad`},
		{"author demo <demo@localhost>", "author demo <demo@localhost>"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextEscapedQuery(t *testing.T) {
	in := `{"url":"http://h/x?a=1\u0026token=secret-tok"}`
	if got := Text(in); strings.Contains(got, "secret-tok") {
		t.Errorf("Text(%q) = %q", in, got)
	}
}

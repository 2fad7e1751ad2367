package app

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
)

// TestVerbosity runs one dry-run rebase per logging setting through Main and checks what
// each prints, kubectl's levels: the default plain lines, one a step, and a summary; -v 1 step
// starts; -v 4 debug records; -v 6 one line per registry request, -v 7 their headers, -v 8
// their bodies; --log-format text logfmt records and json JSON records, as before plain
// lines; -q only warnings and errors (and -o json's document, which -q does not touch). The
// registry's credentials (the basic auth of the auth file, its password as a canary) print at
// no level: neither in a header nor in a body.
func TestVerbosity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	secrets := []string{"s3cret-token", base64.StdEncoding.EncodeToString([]byte("rebase-bot:s3cret-token"))}
	reg := "http://" + e.reg.Host()
	for _, tc := range []struct {
		name        string
		flags       []string
		want, avoid []string
		check       func(t *testing.T, out, errOut string)
	}{
		// First, with a cold cache, so that blobs are fetched too.
		{name: "-v 8", flags: []string{"-v", "8"},
			want: []string{"GET " + reg + "/v2/", "Request Headers:", "    Authorization: Basic xxxxx", "Response Status: 200 OK in ",
				"Response Headers:", "    Docker-Content-Digest: sha256:", `Response Body: {"schemaVersion":2`,
				"Response Body: not shown (not text; application/", "would write:"},
			avoid: []string{"level="}},
		{name: "-v 7", flags: []string{"-v", "7"},
			want:  []string{"GET " + reg + "/v2/", "    Authorization: Basic xxxxx", "Response Status: 200 OK in "},
			avoid: []string{"Response Body"}},
		{name: "-v 6", flags: []string{"-v", "6"},
			want:  []string{"GET " + reg + "/v2/", " 200 OK in ", "image sources sources="},
			avoid: []string{"Request Headers", "Authorization", "Response Body"}},
		{name: "-v 4", flags: []string{"-v", "4"},
			want:  []string{"image sources sources=", "resolve         started"},
			avoid: []string{reg + "/v2/", "level="}},
		{name: "-v 8 json logs", flags: []string{"-v", "8", "--log-format", "json"}, check: func(t *testing.T, out, errOut string) {
			http := 0
			for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
				var rec struct{ Msg string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("stderr line is not JSON: %q", line)
				}
				if strings.HasPrefix(rec.Msg, "GET "+reg) || strings.HasPrefix(rec.Msg, "Response Body: ") {
					http++
				}
			}
			if http == 0 {
				t.Error("no request records")
			}
		}},
		{name: "-v 1", flags: []string{"-v", "1"},
			want:  []string{"resolve         started", "using registry credentials registry=" + e.reg.Host()},
			avoid: []string{"image sources", "level="}},
		{name: "--log-format text", flags: []string{"--log-format", "text"},
			want:  []string{`level=INFO msg="phase resolve done" phase=resolve took=`},
			avoid: []string{"phase=resolve state=start", "Warning: "}},
		{name: "--log-format text -v 1", flags: []string{"--log-format", "text", "-v", "1"},
			want: []string{`level=V1 msg="phase resolve" phase=resolve state=start`}, avoid: []string{"DEBUG"}},
		{name: "default", check: func(t *testing.T, out, errOut string) {
			if !strings.Contains(out, "would write:") || !hasStepLine(errOut, "resolve") {
				t.Error("lacks the summary or the step lines")
			}
			checkPlainStderr(t, errOut)
		}},
		{name: "-q", flags: []string{"-q"}, check: func(t *testing.T, out, errOut string) {
			if out != "" {
				t.Errorf("stdout is not empty")
			}
			checkOnlyWarnings(t, errOut)
		}},
		{name: "--quiet -o json", flags: []string{"--quiet", "-o", "json"}, check: func(t *testing.T, out, errOut string) {
			var doc struct{ Kind string }
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Kind != v1alpha1.KindRebaseResult {
				t.Errorf("-o json: kind %q, %v", doc.Kind, err)
			}
			checkOnlyWarnings(t, errOut)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			code, out, errOut := e.run(dir, append([]string{"--ocp", "4.18", "--allow-base-mismatch", "--dry-run"}, tc.flags...)...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			for _, s := range secrets {
				if strings.Contains(out+errOut, s) {
					t.Fatalf("credentials %q printed", s)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(errOut, a) {
					t.Errorf("stderr has %q", a)
				}
			}
			if tc.check != nil {
				tc.check(t, out, errOut)
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

// TestQuietExcludesVerbosity: -q and -v are one of cobra's mutually exclusive groups, a usage
// error naming both, on every command.
func TestQuietExcludesVerbosity(t *testing.T) {
	for _, args := range [][]string{
		{"-q", "-v", "2", "--dry-run"},
		{"--quiet", "--v", "5", "--dry-run"},
		{"resolve", "--ocp", "4.18", "-q", "-v", "1"},
		{"apply", "--assets", ".", "-v", "4", "--quiet"},
	} {
		code, _, errOut := runMain(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "[quiet v]") {
			t.Errorf("%v: exit %d, stderr %q; want %d naming quiet and v", args, code, errOut, ExitUsage)
		}
	}
}

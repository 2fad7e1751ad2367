package app

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
)

// TestVerbosity runs one dry-run rebase per logging setting through Main and checks what
// each prints: -v 4 adds go-containerregistry's HTTP log with the credentials redacted,
// the default one line per phase and a summary, -q only warnings and errors (and -o json's
// document, which -q does not touch).
func TestVerbosity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	secrets := []string{"s3cret-token", base64.StdEncoding.EncodeToString([]byte("rebase-bot:s3cret-token"))}
	for _, tc := range []struct {
		name  string
		flags []string
		check func(t *testing.T, out, errOut string)
	}{
		// First, with a cold cache, so that blobs are fetched too.
		{"-v 4", []string{"-v", "4"}, func(t *testing.T, out, errOut string) {
			for _, want := range []string{`level=DEBUG msg="registry HTTP" message="--> GET http://` + e.reg.Host(),
				`Authorization: <redacted>`, `<-- 200 http://` + e.reg.Host(), "would write:"} {
				if !strings.Contains(out+errOut, want) {
					t.Errorf("lacks %q", want)
				}
			}
		}},
		{"-v 4 json logs", []string{"-v", "4", "--log-format", "json"}, func(t *testing.T, out, errOut string) {
			http := 0
			for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
				var rec struct{ Msg, Message string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("stderr line is not JSON: %q", line)
				}
				if rec.Msg == "registry HTTP" && strings.HasPrefix(rec.Message, "--> ") {
					http++
				}
			}
			if http == 0 {
				t.Error("no registry HTTP records")
			}
		}},
		{"-v 1", []string{"-v", "1"}, func(t *testing.T, out, errOut string) {
			if !strings.Contains(errOut, `level=V1 msg="phase resolve" phase=resolve state=start`) || strings.Contains(errOut, "DEBUG") {
				t.Errorf("-v 1: want phase start lines at level V1 and no debug records:\n%s", errOut)
			}
		}},
		{"default", nil, func(t *testing.T, out, errOut string) {
			if !strings.Contains(out, "would write:") || !strings.Contains(errOut, `level=INFO msg="phase resolve done"`) {
				t.Error("lacks the summary or the phase lines")
			}
			if strings.Contains(errOut, "DEBUG") || strings.Contains(errOut, "phase resolve\" phase=resolve state=start") {
				t.Error("debug records or phase start lines at the default verbosity")
			}
		}},
		{"-q", []string{"-q"}, func(t *testing.T, out, errOut string) {
			if out != "" {
				t.Errorf("stdout is not empty")
			}
			checkOnlyWarnings(t, errOut)
		}},
		{"--quiet -o json", []string{"--quiet", "-o", "json"}, func(t *testing.T, out, errOut string) {
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
			tc.check(t, out, errOut)
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

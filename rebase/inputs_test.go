package rebase

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
)

func TestMinorOf(t *testing.T) {
	for in, want := range map[string]string{
		"4.18": "4.18", "4.18.12": "4.18", "5.0.0-0.nightly-2026-07-23-224236": "5.0",
		"5.0.0-0.nightly-arm64-2026-07-27-004356": "5.0", "4.22.0-ec.2": "4.22", "": "", "five": "",
	} {
		got, err := era.MinorOf(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("era.MinorOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseLastRebase(t *testing.T) {
	const x86 = "registry.ci.openshift.org/ocp/release-5:5.0.0-0.nightly-2026-07-23-224236"
	const arm = "registry.ci.openshift.org/ocp-arm64/release-arm64-5:5.0.0-0.nightly-arm64-2026-07-27-004356"
	const ga = "quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64 quay.io/openshift-release-dev/ocp-release:5.0.1-aarch64"
	const real = "./scripts/auto-rebase/rebase.sh to \"" + x86 + "\" \"" + arm + "\"\n"
	cases := []struct {
		name, in, wantErr string
	}{
		{"microshift format", "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \"" + x86 + "\" \"" + arm + "\"\n", ""},
		{"single quotes, bare words", "#!/bin/bash\nscripts/auto-rebase/rebase.sh to '" + x86 + "' " + arm + "\n", ""},
		{"one arch only", "./scripts/auto-rebase/rebase.sh to \"" + x86 + "\"\n", "expected an x86_64 and an aarch64 release pull spec, got 1"},
		{"no rebase line", "#!/bin/bash -x\necho hello\n", "no `rebase.sh to"},
		{"lvms rebase is not it", "./scripts/auto-rebase/rebase_lvms.sh to \"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4\"\n", "line 1: `./scripts/auto-rebase/rebase_lvms.sh` is not a command a record runs"},
		// The classes a pattern reading got wrong: text that bash does not run comes first,
		// the executed invocation after it; a continued line; two invocations.
		{"commented-out GA pair above", "#!/bin/bash -x\n# ./scripts/auto-rebase/rebase.sh to " + ga + "\n" + real, ""},
		{"echo'd GA pair above", "#!/bin/bash -x\necho ./scripts/auto-rebase/rebase.sh to " + ga + "\n" + real, ""},
		{"here-doc above", "#!/bin/bash -x\ncat <<EOF\n./scripts/auto-rebase/rebase.sh to " + ga + "\nEOF\n" + real, ""},
		{"continuation lines", "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \\\n    \"" + x86 + "\" \\\n    \"" + arm + "\"\n", ""},
		{"two invocations", "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to " + ga + "\n" + real, "line 3: a second rebase.sh to command (the first is on line 2)"},
		{"three arguments", "./scripts/auto-rebase/rebase.sh to a b c\n", "line 1: rebase.sh to: expected an x86_64 and an aarch64 release pull spec, got 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := recorded.ParseLastRebase([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), recorded.LastRebaseFile) {
					t.Fatalf("error %v, want %q naming %s", err, tc.wantErr, recorded.LastRebaseFile)
				}
				return
			}
			if err != nil || got["x86_64"] != x86 || got["aarch64"] != arm {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}

func TestChooseOCP(t *testing.T) {
	tree := func(base string) string {
		dir := t.TempDir()
		if base != "" {
			p := filepath.Join(dir, filepath.FromSlash(recorded.BaseFile))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(`{"release":{"base":"`+base+`"},"images":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	cases := []struct {
		name, base, given string
		allow             bool
		want, wantErr     string
	}{
		{"from a 5.0 nightly", "5.0.0-0.nightly-2026-07-23-224236", "", false, "5.0", ""},
		{"from an arm-style nightly", "4.22.0-0.nightly-arm64-2026-07-21-030405", "", false, "4.22", ""},
		{"given and equal", "4.22.0-0.nightly-2026-07-20-101112", "4.22", false, "4.22", ""},
		{"given and different", "5.0.0-0.nightly-2026-07-23-224236", "4.23", false, "", "OCP 4.23 differs from the tree's OpenShift 5.0 (release.base 5.0.0-0.nightly-2026-07-23-224236"},
		{"different but allowed", "5.0.0-0.nightly-2026-07-23-224236", "4.23", true, "4.23", ""},
		{"no tree, given", "", "4.18", false, "4.18", ""},
		{"no tree, not given", "", "", false, "", "OCP X.Y not given"},
		{"bad base", "latest", "", false, "", "release.base"},
		// release.base goes through the strict parser --ocp uses, given --ocp or not.
		{"base without minor", "5", "", false, "", recorded.BaseFile + `: release.base "5": expected an OpenShift version X.Y.Z`},
		{"base with v", "v5.0.0", "", false, "", recorded.BaseFile + `: release.base "v5.0.0": expected`},
		{"base with leading zero", "05.0.1", "", false, "", recorded.BaseFile + `: release.base "05.0.1": expected`},
		{"base without patch", "5.0", "5.0", false, "", recorded.BaseFile + `: release.base "5.0": expected`},
		{"bad base, given and allowed", "v5.0.0", "4.23", true, "", recorded.BaseFile + `: release.base "v5.0.0": expected`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseOCP(tc.given, tree(tc.base), tc.allow)
			if tc.wantErr != "" {
				// A release.base that is not a version is bad input in the tree, not a usage
				// error; a missing or contradicted --ocp is.
				badBase := strings.HasPrefix(tc.name, "bad base") || strings.HasPrefix(tc.name, "base ")
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || IsUsage(err) == badBase {
					t.Fatalf("error %v, want an error containing %q, a usage error: %v", err, tc.wantErr, !badBase)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestChooseOCPTreeFileUnreadable: a release JSON that is present but no readable JSON (a
// FIFO, a directory, not JSON) is an error of the tree naming the file (exit 1), not "--ocp
// not given" (a usage error, exit 2): giving --ocp would not mend the tree. (Found by the
// attack suite's hostile tree rows; before, every such tree exited 2.)
func TestChooseOCPTreeFileUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p string) error
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte("{"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(recorded.BaseFile))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(p); err != nil {
				t.Fatal(err)
			}
			_, err := chooseOCP("", dir, false)
			if err == nil || IsUsage(err) || !strings.Contains(err.Error(), path.Base(recorded.BaseFile)) {
				t.Fatalf("error %v, want an error of the tree (not a usage error) naming %s", err, recorded.BaseFile)
			}
		})
	}
}

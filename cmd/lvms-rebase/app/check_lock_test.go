package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCheckVerifiesLock: --check treats an edited lock as drift (exit 3) — a recorded file
// hash, an input version or digest, an image digest, the snapshot checksum — names what
// differs, does not log drift as an ERROR, and prints each reference once.
func TestCheckVerifiesLock(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	if code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch"); code != 0 {
		t.Fatalf("rebase: exit %d\n%s\n%s", code, out, errOut)
	}
	lockPath := filepath.Join(dir, "scripts/auto-rebase/lvms-rebase.lock.yaml")
	orig, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(dir, "--check")
	if code != 0 {
		t.Fatalf("clean --check: exit %d\n%s\n%s", code, out, errOut)
	}
	if regexp.MustCompile(`@sha256:[0-9a-f]{64}@sha256:`).MatchString(out) {
		t.Errorf("--check prints a reference with its digest twice:\n%s", out)
	}
	hex64 := regexp.MustCompile(`[0-9a-f]{64}`)
	for _, tc := range []struct {
		name, old, want string
	}{
		{"file hash", "- path: assets/components/lvms/lvm.topolvm.io_lvmclusters.yaml\n  sha256: ", "lvm.topolvm.io_lvmclusters.yaml"},
		{"bundle version", "  version: v4.18.4-3\n", "bundle"},
		{"payload version", "payloadVersion: ", "payloadVersion"},
		{"snapshot checksum", "  sha256: sha256:", "snapshotAssets"},
		{"image digest", "  key: lvms_operator\n", "lvms_operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := string(orig)
			i := strings.Index(s, tc.old)
			if i < 0 {
				t.Fatalf("lock has no %q", tc.old)
			}
			var edited string
			switch tc.name {
			case "bundle version":
				edited = s[:i] + "  version: v4.18.4-2\n" + s[i+len(tc.old):]
			case "payload version":
				j := i + len(tc.old) + strings.Index(s[i+len(tc.old):], "\n")
				edited = s[:i] + tc.old + "4.18.99" + s[j:]
			case "image digest":
				// The x86_64 digest of the first image after the key.
				j := strings.Index(s[i:], "x86_64: ") + i
				loc := hex64.FindStringIndex(s[j:])
				edited = s[:j+loc[0]] + strings.Repeat("a", 64) + s[j+loc[1]:]
			default:
				j := i + len(tc.old)
				edited = s[:j] + strings.Repeat("a", 64) + s[j+64:]
			}
			if err := os.WriteFile(lockPath, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(lockPath, orig, 0o644)
			code, out, errOut := e.run(dir, "--check")
			if code != ExitDrift {
				t.Fatalf("edited lock (%s): exit %d, want %d\n%s\n%s", tc.name, code, ExitDrift, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Errorf("drift report does not name %s:\n%s\n%s", tc.want, out, errOut)
			}
			if strings.Contains(errOut, "level=ERROR") || strings.Contains(errOut, "Error:") {
				t.Errorf("drift logged as an ERROR:\n%s", errOut)
			}
			if _, _, jsonErr := e.run(dir, "--check", "--log-format", "json"); strings.Contains(jsonErr, `"level":"ERROR"`) {
				t.Errorf("drift logged as an ERROR (json):\n%s", jsonErr)
			}
		})
	}
}

package app

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
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
			defer mustWriteFile(t, lockPath, orig, 0o644)
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

// TestCheckVerifiesEveryLockField: on a plain 5.0 run (payloads from last_rebase.sh, LVMS 4.21
// by the newest-below rule), every field of the lock that records an input or a rule is
// edited in turn; --check reports each as drift (exit 3) naming the field — or, for a pin whose
// signature contradicts it, as a failed signature check (exit 1) — and leaves the tree as it was. The tool version is the one field a --check may see differ.
func TestCheckVerifiesEveryLockField(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: one --check per lock field")
	}
	e := newE2E(t)
	dir := copyTree(t, filepath.Join(treesRoot, "5.0"))
	if code, out, errOut := e.run(dir); code != 0 {
		t.Fatalf("rebase: exit %d\n%s\n%s", code, out, errOut)
	}
	lockPath := filepath.Join(dir, filepath.FromSlash(lock.Path))
	orig, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	base := readLockFile(t, dir)
	if base.PayloadRule != "tree" || base.LVMS == nil || base.LVMS.Rule != "newest-below" || len(base.SnapshotAssets.Files) == 0 {
		t.Fatalf("the run did not record what this test edits: rule %q, lvms %+v, %d snapshot files", base.PayloadRule, base.LVMS, len(base.SnapshotAssets.Files))
	}
	other := strings.Repeat("b", 64)
	signed := slices.IndexFunc(base.Provenance.Records, func(r provenance.Record) bool { return r.Status == provenance.StatusSigned })
	if signed < 0 {
		t.Fatalf("the run recorded no signed digest: %+v", base.Provenance)
	}
	for _, tc := range []struct {
		field string
		edit  func(l *lock.Lock)
		code  int
		want  string
	}{
		{"ocp", func(l *lock.Lock) { l.OCP = "4.22" }, ExitDrift, "is OpenShift 5.0, want 4.22"},
		{"era", func(l *lock.Lock) { l.Era = "lvms-4.18" }, ExitDrift, "era: the lock records lvms-4.18"},
		{"payloadVersion", func(l *lock.Lock) { l.PayloadVersion = "5.0.9" }, ExitDrift, "payloadVersion: the lock records 5.0.9"},
		{"lvms.minor", func(l *lock.Lock) { l.LVMS.Minor = "4.20" }, ExitDrift, "lvms: the lock records {Minor:4.20"},
		{"lvms.rule", func(l *lock.Lock) { l.LVMS.Rule = "flag" }, ExitDrift, "Rule:flag"},
		{"lvms.reason", func(l *lock.Lock) { l.LVMS.Reason = "because" }, ExitDrift, "Reason:because"},
		// A forced choice recorded before its reason stopped naming the flag (rule edited too:
		// the fixture run is not forced) is not drift.
		{"lvms.reason legacy", func(l *lock.Lock) { l.LVMS.Rule, l.LVMS.Reason = "flag", "forced with --lvms "+l.LVMS.Minor }, 0, ""},
		{"payloadRule newest", func(l *lock.Lock) { l.PayloadRule = "newest" }, ExitDrift, "rule newest pins the GA tag"},
		{"payloadRule pinned", func(l *lock.Lock) { l.PayloadRule = "pinned" }, ExitDrift, `payloadSource: the lock records "scripts/auto-rebase/last_rebase.sh", rule pinned reads no file`},
		{"payloadSource", func(l *lock.Lock) { l.PayloadSource = "" }, ExitDrift, `payloadSource: the lock records "", rule tree reads scripts/auto-rebase/last_rebase.sh`},
		// The bundle's signature names the tag resolution chose: a lock claiming another tag
		// for the signed digest fails its signature check, before any comparison (exit 1).
		{"bundle.ref", func(l *lock.Lock) { l.Bundle.Ref = strings.Replace(l.Bundle.Ref, ":v4.21.1-4", ":v4.21.0", 1) }, ExitError, "does not name the tag v4.21.0"},
		{"bundle.version", func(l *lock.Lock) { l.Bundle.Version = "v4.21.0" }, ExitDrift, "bundle: the lock records"},
		{"bundle.digest", func(l *lock.Lock) { l.Bundle.Digest = "sha256:" + other }, ExitDrift, "@sha256:" + other + ": the registry does not have this manifest"},
		{"payloads.digest", func(l *lock.Lock) { l.Payloads[0].Digest = "sha256:" + other }, ExitDrift, "@sha256:" + other + ": the registry does not have this manifest"},
		{"payloads.ref", func(l *lock.Lock) { l.Payloads[0].Ref = strings.Replace(l.Payloads[0].Ref, "2026-07", "2026-06", 1) }, ExitDrift, "does not match tag"},
		{"payloads.version", func(l *lock.Lock) { l.Payloads[1].Version = "5.0.9" }, ExitDrift, "payloads: the lock records"},
		{"snapshotAssets.commit", func(l *lock.Lock) { l.SnapshotAssets.Commit = other[:40] }, ExitDrift, "snapshotAssets.commit"},
		{"snapshotAssets.sha256", func(l *lock.Lock) { l.SnapshotAssets.SHA256 = "sha256:" + other }, ExitDrift, "snapshotAssets.sha256"},
		{"snapshotAssets.files", func(l *lock.Lock) { l.SnapshotAssets.Files[0].SHA256 = other }, ExitDrift, "snapshotAssets.files[" + base.SnapshotAssets.Files[0].Path + "].sha256"},
		{"images.repository", func(l *lock.Lock) { l.Images[0].Repository += "-x" }, ExitDrift, "images[" + base.Images[0].Key + "]"},
		{"images.arch", func(l *lock.Lock) { l.Images[0].Arch["x86_64"] = "sha256:" + other }, ExitDrift, "images[" + base.Images[0].Key + "]"},
		{"files", func(l *lock.Lock) { l.Files[0].SHA256 = other }, ExitDrift, "files[" + base.Files[0].Path + "]"},
		{"provenance.policy", func(l *lock.Lock) { l.Provenance.Policy = "sha256:" + other }, ExitDrift, "provenance.policy: the lock records sha256:" + other},
		{"provenance.records.key", func(l *lock.Lock) { l.Provenance.Records[signed].Signatures[0].Key = "sha256:" + other }, ExitDrift, "provenance[" + base.Provenance.Records[signed].Role},
		{"provenance.records (one dropped)", func(l *lock.Lock) { l.Provenance.Records = l.Provenance.Records[1:] }, ExitDrift, "not in the lock, this run verified it"},
		{"toolVersion (exempt)", func(l *lock.Lock) { l.ToolVersion = "v0.0.1-elsewhere" }, 0, ""},
	} {
		t.Run(tc.field, func(t *testing.T) {
			e.t = t
			l := readLockFile(t, dir)
			tc.edit(l)
			data, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lockPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer mustWriteFile(t, lockPath, orig, 0o644)
			before := treeHash(t, dir)
			code, out, errOut := e.run(dir, "--check")
			if code != tc.code {
				t.Fatalf("edited %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.field, code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Errorf("the drift report does not say %q:\n%s\n%s", tc.want, out, errOut)
			}
			if treeHash(t, dir) != before {
				t.Error("--check changed the tree")
			}
		})
	}
}

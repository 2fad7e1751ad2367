package recorded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
)

// TestPayloadRuleDrift: rule tree must name last_rebase.sh and pin what it runs rebase.sh with
// now; rule newest pins GA tags of the payload version; newest and pinned read no file.
func TestPayloadRuleDrift(t *testing.T) {
	const x86 = "registry.ci.openshift.org/ocp/release-5:5.0.0-0.nightly-2026-07-23-224236"
	const arm = "registry.ci.openshift.org/ocp-arm64/release-arm64-5:5.0.0-0.nightly-arm64-2026-07-27-004356"
	nightlies := []lock.Payload{{Arch: "x86_64", Ref: x86, Version: "5.0.0-0.nightly-2026-07-23-224236"}, {Arch: "aarch64", Ref: arm, Version: "5.0.0-0.nightly-arm64-2026-07-27-004356"}}
	ga := []lock.Payload{{Arch: "x86_64", Ref: "quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64", Version: "5.0.1"}, {Arch: "aarch64", Ref: "quay.io/openshift-release-dev/ocp-release:5.0.1-aarch64", Version: "5.0.1"}}
	record := "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \"" + x86 + "\" \"" + arm + "\"\n"
	for _, tc := range []struct {
		name, rule, source, file string
		payloads                 []lock.Payload
		want                     string // "" for no drift
	}{
		{"tree, as recorded", PayloadTree, LastRebaseFile, record, nightlies, ""},
		{"tree, file moved on", PayloadTree, LastRebaseFile, strings.ReplaceAll(record, "2026-07-23", "2026-08-01"), nightlies, "payloads[x86_64].ref: the lock records " + x86},
		{"tree, no file", PayloadTree, LastRebaseFile, "", nightlies, "the tree has no " + LastRebaseFile},
		{"tree, source edited", PayloadTree, "", record, nightlies, `payloadSource: the lock records "", rule tree reads`},
		{"newest, GA tags", PayloadNewest, "", record, ga, ""},
		{"newest, nightlies", PayloadNewest, "", record, nightlies, "rule newest pins the GA tag"},
		{"newest with a source", PayloadNewest, LastRebaseFile, record, ga, "rule newest reads no file"},
		{"pinned", PayloadPinned, "", record, nightlies, ""},
		{"older lock", "", "", "", nightlies, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != "" {
				p := filepath.Join(root, filepath.FromSlash(LastRebaseFile))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := PayloadRuleDrift(root, &lock.Lock{PayloadRule: tc.rule, PayloadSource: tc.source, Payloads: tc.payloads})
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(got, "\n"); (tc.want == "") != (s == "") || !strings.Contains(s, tc.want) {
				t.Errorf("drift %q, want %q", s, tc.want)
			}
		})
	}
}

package lock

import (
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

// withProvenance is sample with what a verifying run records.
func withProvenance() *Lock {
	l := sample()
	l.Provenance = &provenance.Report{Policy: provenance.BuiltinSource, Records: []provenance.Record{
		{Role: "bundle", Image: "registry.redhat.io/lvms4/lvms-operator-bundle", Digest: d("1"), Status: provenance.StatusSigned, Scope: "registry.redhat.io",
			Signatures: []provenance.Signature{{Format: provenance.FormatCosign, Key: "sha256:" + strings.Repeat("e", 64), KeyName: "Red Hat release key 3",
				Class: provenance.ClassRedHat, Identity: "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4", Sig: d("c"), Layer: 1, SHA256: strings.Repeat("a", 64)}}},
		{Role: "payload x86_64", Image: "quay.io/openshift-release-dev/ocp-release", Digest: d("4"), Status: provenance.StatusSigned,
			Signatures: []provenance.Signature{{Format: provenance.FormatAtomic, Key: "567E347AD0044ADE55BA8A5F199E2F91FD431D51",
				Identity: "quay.io/openshift-release-dev/ocp-release:4.18.12-x86_64", Store: provenance.OfficialStore, N: 1, SHA256: strings.Repeat("b", 64)}}},
		{Role: "csi-snapshot-controller x86_64", Image: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Digest: d("a"), Status: provenance.StatusCovered,
			CoveredBy: "quay.io/openshift-release-dev/ocp-release@" + d("4")},
	}}
	return l
}

// TestProvenanceValidate: the lock's provenance records are validated field by field, and a
// lock round-trips through Marshal and Parse (strict) with them.
func TestProvenanceValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(p *provenance.Report)
		want   string
	}{
		{"ok", func(*provenance.Report) {}, ""},
		{"policy", func(p *provenance.Report) { p.Policy = "mine" }, `provenance.policy: "mine"`},
		{"policy file", func(p *provenance.Report) { p.PolicyFile = "/home/me/policy.json" }, "provenance.policyFile: a path of one machine"},
		{"status", func(p *provenance.Report) { p.Records[0].Status = "trusted" }, `provenance.records[0] (bundle).status: "trusted"`},
		{"digest", func(p *provenance.Report) { p.Records[0].Digest = "sha256:1" }, "provenance.records[0] (bundle).digest"},
		{"signed without signatures", func(p *provenance.Report) { p.Records[0].Signatures = nil }, "a signed digest needs its signatures"},
		{"covered without payload", func(p *provenance.Report) { p.Records[2].CoveredBy = "" }, "coveredBy: required"},
		{"unsigned without reason", func(p *provenance.Report) {
			p.Records[2].Status, p.Records[2].CoveredBy = provenance.StatusUnsigned, ""
		}, "reason: required"},
		{"format", func(p *provenance.Report) { p.Records[0].Signatures[0].Format = "gpg" }, `format: "gpg"`},
		{"atomic without store", func(p *provenance.Report) { p.Records[1].Signatures[0].Store = "" }, "needs its store and n"},
		{"cosign without sig", func(p *provenance.Report) { p.Records[0].Signatures[0].Sig = "x" }, `.sig: "x"`},
		{"no key", func(p *provenance.Report) { p.Records[0].Signatures[0].Key = "" }, "key and identity are required"},
		{"sha256", func(p *provenance.Report) { p.Records[1].Signatures[0].SHA256 = "sha256:" + strings.Repeat("b", 64) }, ".sha256:"},
		{"twice", func(p *provenance.Report) { p.Records[1] = p.Records[0] }, "listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := withProvenance()
			tc.mutate(l.Provenance)
			err := l.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				data, err := l.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				back, err := Parse(data)
				if err != nil || len(Compare(l, back)) != 0 {
					t.Fatalf("round trip: %v %v", err, Compare(l, back))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(strings.Replace(string(mustMarshal(t, withProvenance())), "    status: covered", "    status: covered\n    trusted: true", 1))); err == nil || !strings.Contains(err.Error(), `unknown field "trusted"`) {
		t.Errorf("an unknown provenance field: %v", err)
	}
}

func mustMarshal(t *testing.T, l *Lock) []byte {
	t.Helper()
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompareProvenance: --check reports a lock whose provenance differs from what the
// re-verification finds; a lock without provenance (written before signatures were verified)
// is no drift for that.
func TestCompareProvenance(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(recorded, actual *Lock)
		want string
	}{
		{"same", func(*Lock, *Lock) {}, ""},
		{"old lock", func(r, _ *Lock) { r.Provenance = nil }, ""},
		{"verified none", func(_, a *Lock) { a.Provenance = nil }, "this run verified none"},
		{"policy", func(r, _ *Lock) { r.Provenance.Policy = d("f") }, "provenance.policy: the lock records sha256:ffff"},
		{"allow unsigned", func(r, _ *Lock) { r.Provenance.AllowUnsigned = true }, "provenance.allowUnsigned"},
		{"identity", func(r, _ *Lock) { r.Provenance.Records[0].Signatures[0].Identity += "x" }, "provenance[bundle registry.redhat.io/lvms4/lvms-operator-bundle@"},
		{"unsigned now signed", func(r, _ *Lock) {
			r.Provenance.Records[1].Status, r.Provenance.Records[1].Signatures, r.Provenance.Records[1].Reason = provenance.StatusUnsigned, nil, "allowed unsigned: no signature"
		}, "the lock records unsigned (allowed unsigned: no signature), this run found signed: atomic by"},
		{"record dropped", func(_, a *Lock) { a.Provenance.Records = a.Provenance.Records[:2] }, "recorded in the lock, not verified by this run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded, actual := withProvenance(), withProvenance()
			tc.edit(recorded, actual)
			got := strings.Join(Compare(recorded, actual), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Compare = %q, want %q", got, tc.want)
			}
		})
	}
}

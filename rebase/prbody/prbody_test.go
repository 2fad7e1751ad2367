package prbody

import (
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// TestPRBodySections: warnings verbatim (markdown cannot read `*` or `_` in them), a
// Security review only with escalations, "RBAC did not change" when it did not, separate
// file counts, and image claims taken from where render found the placeholders.
func TestPRBodySections(t *testing.T) {
	changes := &tree.Changes{Add: []string{"a"}, Change: []string{"b", "c"}, Remove: []string{"d"}}
	img := bundle.Image{Name: "sub-csi", Key: "sub_csi", Ref: "r@sha256:1", Undeclared: true}
	tests := []struct {
		name string
		in   Input
		want []string
		not  []string
	}{
		{name: "unchanged RBAC, no warnings, an image nothing uses",
			in:   Input{Changes: changes, RBAC: &review.RBAC{}, Undeclared: []bundle.Image{img}, Arches: []string{"x86_64"}},
			want: []string{"RBAC did not change.", "The run printed no warnings.", "1 added, 2 changed (0 in meaning, 0 only in formatting), 1 removed.", "in release-x86_64.json; no shipped file uses it"},
			not:  []string{"Security review"}},
		{name: "escalation and warnings",
			in: Input{Changes: changes, Warnings: []string{"verbs=[*] on *_secret_*", "new workload: x"},
				RBAC: &review.RBAC{Changed: true, Changes: []review.Finding{{Role: "ClusterRole r", Rule: "verbs=[*]", Class: "added"}},
					Escalations: []review.Finding{{Role: "ClusterRole r", Rule: "verbs=[*]", Class: "wildcard"}}},
				Undeclared: []bundle.Image{img}, ImageUses: []render.ImageUse{{File: "f.yaml", Field: "spec.x", Key: "sub_csi"}}},
			want: []string{"### Security review", "- `ClusterRole r` (wildcard): `verbs=[*]`", "- ClusterRole `r`: added `verbs=[*]`",
				"```text\nverbs=[*] on *_secret_*\nnew workload: x\n```", "used as `{{ .ReleaseImage.sub_csi }}` in `f.yaml` spec.x"},
			not: []string{"RBAC did not change."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := Body(tt.in)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("body has %q:\n%s", n, body)
				}
			}
		})
	}
}

// TestProvenanceSection: the Provenance section names, per digest, the key that signed it for
// which identity; unsigned and CI-signed-only digests are said plainly before the table; a run
// that verified nothing says so.
func TestProvenanceSection(t *testing.T) {
	changes := &tree.Changes{}
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	rep := &provenance.Report{Policy: provenance.BuiltinSource, AllowUnsigned: true, Records: []provenance.Record{
		{Role: "bundle", Image: "registry.redhat.io/lvms4/lvms-operator-bundle", Digest: d("1"), Status: provenance.StatusSigned,
			Signatures: []provenance.Signature{{Format: provenance.FormatCosign, Key: "sha256:ba9d", KeyName: "Red Hat release key 3", Identity: "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4", Sig: d("9")}}},
		{Role: "payload x86_64", Image: "registry.ci.openshift.org/ocp/release", Digest: d("2"), Status: provenance.StatusSigned,
			Signatures: []provenance.Signature{{Format: provenance.FormatAtomic, Key: "6A95", KeyName: "OpenShift CI key openshift-ci-4", Class: provenance.ClassCI,
				Identity: "registry.ci.openshift.org/ocp/release:4.18.0-0.nightly", SignedDigest: d("3"), Store: provenance.CIStore, N: 2}}},
		{Role: "lvms_operator x86_64", Image: "quay.io/lvms_dev/op", Digest: d("4"), Status: provenance.StatusUnsigned, Reason: "allowed unsigned: no signature"},
		{Role: "csi-snapshot-controller x86_64", Image: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Digest: d("5"), Status: provenance.StatusCovered, CoveredBy: "registry.ci.openshift.org/ocp/release@" + d("2")},
	}}
	body := Body(Input{Changes: changes, Provenance: rep})
	for _, w := range []string{
		"### Provenance", "the built-in policy",
		"**1 digest(s) are unsigned** (the run allowed unsigned content)",
		"**1 digest(s) are CI-signed only**",
		"| bundle `registry.redhat.io/lvms4/lvms-operator-bundle` | `" + d("1") + "` | Red Hat release key 3 `sha256:ba9d` (cosign, `.sig` " + d("9") + ") | `registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4` |",
		"**CI-signed only**: OpenShift CI key openshift-ci-4 `6A95` (atomic, store " + provenance.CIStore + " #2)",
		"(its list `" + d("3") + "`)",
		"**unsigned**: allowed unsigned: no signature",
		"covered by the payload `registry.ci.openshift.org/ocp/release@" + d("2") + "`",
	} {
		if !strings.Contains(body, w) {
			t.Errorf("body lacks %q:\n%s", w, body)
		}
	}
	if body := Body(Input{Changes: changes}); !strings.Contains(body, "No signature was verified") {
		t.Errorf("no provenance:\n%s", body)
	}
}

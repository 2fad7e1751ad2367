package prbody

import (
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
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

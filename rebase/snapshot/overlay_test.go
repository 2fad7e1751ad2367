package snapshot

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
)

// edit rewrites one operator file of the assets by a string replacement, failing the test
// when the text is not there (the case would test nothing).
func edit(t *testing.T, a *Assets, file, old, new string) {
	t.Helper()
	s := string(a.Files[file])
	if !strings.Contains(s, old) {
		t.Fatalf("%s has no %q", file, old)
	}
	a.Files[file] = []byte(strings.ReplaceAll(s, old, new))
}

// TestOverlayRefusesUpstreamDrift: an upstream change the overlay's patches were not written
// for fails the render, naming what to update, instead of shipping the operator's object
// half-patched. Each case is an edit of a realistic operator tree.
func TestOverlayRefusesUpstreamDrift(t *testing.T) {
	const dep, webhook, rbac = "assets/csi_controller_deployment.yaml", "assets/webhook_deployment.yaml", "manifests/05_operand_rbac.yaml"
	cases := []struct {
		name, ocp, tree string
		edit            func(t *testing.T, a *Assets)
		want            []string
	}{
		{"controller Deployment renamed", "4.18", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "  name: csi-snapshot-controller\n  namespace:", "  name: snapshot-controller\n  namespace:")
		}, []string{"overlays/csi-snapshot-controller/4.18/kustomization.yaml: patches[2]: target Deployment csi-snapshot-controller matches no object of the build"}},
		{"controller container renamed", "4.18", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "- name: snapshot-controller", "- name: controller")
		}, []string{"kustomize build overlays/csi-snapshot-controller/4.18", "testing value /spec/template/spec/containers/0/name failed"}},
		{"a second container", "5.0", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "      containers:\n", "      containers:\n        - name: sidecar\n          image: ${OPERAND_IMAGE}\n")
		}, []string{"testing value /spec/template/spec/containers/0/name failed"}},
		{"a second container after the operand", "5.0", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "      priorityClassName:", "        - name: sidecar\n          image: ${SIDECAR_IMAGE}\n      priorityClassName:")
		}, []string{"csi_controller_deployment.yaml: Deployment csi-snapshot-controller field spec.template.spec.containers[1].image: ${SIDECAR_IMAGE}"}},
		{"new template variable", "4.18", "release-4.17", func(t *testing.T, a *Assets) {
			edit(t, a, "assets/serviceaccount.yaml", "  namespace: ${CONTROLPLANE_NAMESPACE}", "  namespace: ${CONTROLPLANE_NAMESPACE}\n  labels:\n    tier: ${TIER}")
		}, []string{"upstream template variables left after the overlay (patch them in overlays/csi-snapshot-controller/4.18/kustomization.yaml",
			"serviceaccount.yaml: ServiceAccount csi-snapshot-controller field metadata.labels.tier: ${TIER}"}},
		{"webhook Service renamed", "4.17", "release-4.17", func(t *testing.T, a *Assets) {
			edit(t, a, "assets/webhook_service.yaml", "name: csi-snapshot-webhook\n  namespace", "name: snapshot-webhook\n  namespace")
		}, []string{"overlays/csi-snapshot-controller/4.14", "nothing selected by Service", "csi-snapshot-webhook"}},
		{"webhook called by URL", "4.17", "main", func(t *testing.T, a *Assets) {
			edit(t, a, "assets/webhook_config.yaml", "      service:\n        name: csi-snapshot-webhook\n        namespace: openshift-cluster-storage-operator\n        path: /volumesnapshot",
				"      url: https://example.com/volumesnapshot")
		}, []string{"overlays/csi-snapshot-controller/4.14", "webhooks.*.clientConfig.service.namespace"}},
		{"webhook Deployment renamed", "4.16", "release-4.17", func(t *testing.T, a *Assets) {
			edit(t, a, webhook, "name: csi-snapshot-webhook\n  namespace", "name: snapshot-webhook\n  namespace")
		}, []string{"overlays/csi-snapshot-controller/4.14/kustomization.yaml: patches[0]: target Deployment csi-snapshot-webhook matches no object"}},
		{"webhook container renamed", "4.16", "release-4.17", func(t *testing.T, a *Assets) {
			edit(t, a, webhook, "- name: webhook", "- name: validation")
		}, []string{"kustomize build overlays/csi-snapshot-controller/4.14", "testing value /spec/template/spec/containers/0/name failed"}},
		{"upstream drops priorityClassName", "5.0", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "      priorityClassName: ${PRIORITY_CLASS}\n", "")
		}, nil},
		{"upstream drops the hosted-cluster label and annotation", "4.18", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "  annotations:\n    release.openshift.io/desired-version: ${RELEASE_VERSION}\n  labels:\n    hypershift.openshift.io/managed-by: csi-snapshot-controller-operator\n", "")
		}, nil},
		{"hosted-cluster label beside another label", "4.18", "main", func(t *testing.T, a *Assets) {
			edit(t, a, dep, "    hypershift.openshift.io/managed-by: csi-snapshot-controller-operator\n", "    hypershift.openshift.io/managed-by: csi-snapshot-controller-operator\n    keep: me\n")
		}, nil},
		{"hosted-cluster annotation on the RBAC", "4.18", "main", func(t *testing.T, a *Assets) {
			edit(t, a, rbac, "metadata:\n  name: openshift-csi-snapshot-controller-runner\n", "metadata:\n  name: openshift-csi-snapshot-controller-runner\n  labels:\n    hypershift.openshift.io/managed-by: x\n")
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := era.For(tc.ocp)
			if err != nil {
				t.Fatal(err)
			}
			a := loadTree(t, tc.tree)
			if tc.edit != nil {
				tc.edit(t, a)
			}
			r, err := Translate(a, e)
			if err != nil {
				t.Fatal(err)
			}
			part, err := overlaid(r, e)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("the overlay refused a harmless upstream change: %v", err)
				}
				checkShipped(t, part.Files)
				return
			}
			if err == nil {
				t.Fatalf("the overlay accepted the change; want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// checkShipped: no hosted-cluster bookkeeping and no empty label or annotation map is shipped;
// every other label stays.
func checkShipped(t *testing.T, files []render.File) {
	t.Helper()
	for _, f := range files {
		s := string(f.Data)
		for _, bad := range []string{"hypershift.openshift.io/managed-by", "release.openshift.io/desired-version", "labels: {}", "annotations: {}"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s ships %q:\n%s", f.Path, bad, s)
			}
		}
		var o unstructured.Unstructured
		if err := yaml.Unmarshal(f.Data, &o.Object); err != nil {
			t.Fatal(err)
		}
		if f.Kind == "Deployment" && f.Name == "csi-snapshot-controller" && strings.Contains(s, "keep:") && o.GetLabels()["keep"] != "me" {
			t.Errorf("%s lost the label beside the hosted-cluster one: %v", f.Path, o.GetLabels())
		}
	}
}

package render

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

const pinned = "registry.redhat.io/lvms4/sub@sha256:1111111111111111111111111111111111111111111111111111111111111111"

func deploymentFile(env, arg, annotation string) File {
	return File{Path: "assets/components/lvms/d.yaml", Kind: "Deployment", Name: "d", Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    metadata:
      annotations:
        a.io/image: '` + annotation + `'
    spec:
      containers:
      - name: c
        image: '{{ .ReleaseImage.lvms_operator }}'
        args: ["--x", "` + arg + `"]
        env:
        - name: RELATED_IMAGE_SUB
          value: '` + env + `'
`)}
}

// TestCheckImageRefs: the guard records every placeholder with its field path, refuses a
// pinned reference in any field (naming file and field), and lets the era allow one.
func TestCheckImageRefs(t *testing.T) {
	const p = "{{ .ReleaseImage.sub }}"
	uses, err := checkImageRefs([]File{deploymentFile(p, "--image="+p, `{"i":"`+p+`"}`)}, era.Era{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range uses {
		got = append(got, u.Field+"="+u.Key)
	}
	want := []string{
		`spec.template.metadata.annotations["a.io/image"]=sub`,
		"spec.template.spec.containers[0].args[1]=sub",
		"spec.template.spec.containers[0].env[0].value=sub",
		"spec.template.spec.containers[0].image=lvms_operator",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uses %q, want %q", got, want)
	}

	for field, f := range map[string]File{
		"spec.template.spec.containers[0].env[0].value":    deploymentFile(pinned, p, p),
		"spec.template.spec.containers[0].args[1]":         deploymentFile(p, "--image="+pinned, p),
		`spec.template.metadata.annotations["a.io/image"]`: deploymentFile(p, p, `{"i":"quay.io/lvms_dev/sub:latest"}`),
	} {
		_, err := checkImageRefs([]File{f}, era.Era{})
		if err == nil || !strings.Contains(err.Error(), "assets/components/lvms/d.yaml: Deployment d field "+field+": registry reference") {
			t.Errorf("%s: error %v, want one naming the file and field", field, err)
		}
		ref := pinned
		if strings.Contains(field, "annotations") {
			ref = "quay.io/lvms_dev/sub:latest"
		}
		allow := era.Era{LiteralImages: []era.LiteralImage{{Kind: "Deployment", Name: "d", Field: field, Ref: ref, Why: "test"}}}
		if _, err := checkImageRefs([]File{f}, allow); err != nil {
			t.Errorf("%s: allowed literal refused: %v", field, err)
		}
	}
}

func TestCheckWebhookServices(t *testing.T) {
	hook := File{Path: "assets/components/lvms/m.yaml", Kind: "MutatingWebhookConfiguration", Name: "m", Data: []byte(`kind: MutatingWebhookConfiguration
webhooks:
- name: m.kb.io
  clientConfig:
    service: {namespace: openshift-storage, name: sub-webhook}
`)}
	svc := File{Path: "assets/components/lvms/s.yaml", Kind: "Service", Name: "sub-webhook", Namespace: "openshift-storage"}
	err := checkWebhookServices([]File{hook}, era.Era{})
	if err == nil || !strings.Contains(err.Error(), "webhook m.kb.io calls Service openshift-storage/sub-webhook, which no shipped file creates") {
		t.Errorf("error %v", err)
	}
	if err := checkWebhookServices([]File{hook, svc}, era.Era{}); err != nil {
		t.Error(err)
	}
	mapped := era.Era{WebhookServices: []era.WebhookService{{Webhook: "m.kb.io", Namespace: "openshift-storage", Name: "sub-webhook"}}}
	if err := checkWebhookServices([]File{hook}, mapped); err != nil {
		t.Error(err)
	}
}

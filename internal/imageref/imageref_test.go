package imageref

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestFind(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"registry.redhat.io/lvms4/lvms-rhel9-operator@" + d, []string{"registry.redhat.io/lvms4/lvms-rhel9-operator@" + d}},
		{"--subprovisioner-image=registry.redhat.io/lvms4/sub@" + d, []string{"registry.redhat.io/lvms4/sub@" + d}},
		{"quay.io/lvms_dev/lvms-operator:latest", []string{"quay.io/lvms_dev/lvms-operator:latest"}},
		{`{"image":"quay.io/a/b:v1@` + d + `","x":1}`, []string{"quay.io/a/b:v1@" + d}},
		{"127.0.0.1:5000/a/b:v2 and localhost/c:d", []string{"127.0.0.1:5000/a/b:v2", "localhost/c:d"}},
		// Not pinned images: paths, hosts, URLs, ports, selectors, templates.
		{"registry.redhat.io/lvms4/lvms-rhel9-operator", nil},
		{"https://quay.io/repository/a/b:tag", nil},
		{"--upstream=http://127.0.0.1:8080/", nil},
		{"--metrics-bind-address=127.0.0.1:8080", nil},
		{"lvms-operator-metrics-service.openshift-storage.svc", nil},
		{"app.kubernetes.io/name=lvms-operator", nil},
		{"/tmp/k8s-webhook-server/serving-certs", nil},
		{"{{ .ReleaseImage.lvms_operator }}", nil},
		{"More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range Find(tt.in) {
			got = append(got, r.Ref)
			if tt.in[r.Start:r.End] != r.Ref || (r.Tag == "" && r.Digest == "") || !strings.HasPrefix(r.Ref, r.Repository) {
				t.Errorf("Find(%q): inconsistent %+v", tt.in, r)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Find(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReplace(t *testing.T) {
	in := "--a=quay.io/x/y@" + d + " --b=quay.io/x/z:v1"
	got, kept := Replace(in, func(r Ref) (string, bool) {
		if r.Digest == d {
			return "{{ .ReleaseImage.y }}", true
		}
		return "", false
	})
	if got != "--a={{ .ReleaseImage.y }} --b=quay.io/x/z:v1" || len(kept) != 1 || kept[0].Ref != "quay.io/x/z:v1" {
		t.Errorf("Replace = %q, kept %+v", got, kept)
	}
}

func TestStrings(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a.io/image": "x"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"args": []any{"p", "q"}, "image": "i"}}},
		"n":        int64(3),
	}
	var paths []string
	Strings(obj, func(p, s string) string { paths = append(paths, p+"="+s); return s + "!" })
	want := []string{`metadata.annotations["a.io/image"]=x`, "spec.containers[0].args[0]=p", "spec.containers[0].args[1]=q", "spec.containers[0].image=i"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if obj["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] != "i!" {
		t.Errorf("value not replaced: %v", obj)
	}
}

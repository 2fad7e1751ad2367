package jsonvalue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFromTyped(t *testing.T) {
	replicas := int32(1)
	tests := []struct {
		name string
		in   any
		want map[string]any
	}{
		{"rule", &rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			map[string]any{"verbs": []any{"get"}, "apiGroups": []any{""}, "resources": []any{"pods"}}},
		{"zero creationTimestamp dropped, ints are int64", &appsv1.DeploymentSpec{Replicas: &replicas,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Ports: []corev1.ContainerPort{{ContainerPort: 8443}}}}}}},
			map[string]any{"replicas": int64(1), "selector": nil, "strategy": map[string]any{},
				"template": map[string]any{"metadata": map[string]any{}, "spec": map[string]any{
					"containers": []any{map[string]any{"name": "c", "resources": map[string]any{},
						"ports": []any{map[string]any{"containerPort": int64(8443)}}}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromTyped(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			delete(tc.want, "selector") // a nil pointer: dropped like every null
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := FromTyped(rbacv1.PolicyRule{}); err == nil {
		t.Error("a non-pointer value: want an error")
	}
}

func TestToTyped(t *testing.T) {
	var svc corev1.Service
	err := ToTyped(map[string]any{"kind": "Service", "spec": map[string]any{
		"selector": map[string]any{"app": "x"},
		"ports":    []any{map[string]any{"port": int64(443), "targetPort": "https"}},
		"unknown":  true,
	}}, &svc)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["app"] != "x" || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort != intstr.FromString("https") {
		t.Errorf("got %+v", svc.Spec)
	}
}

func TestNormalize(t *testing.T) {
	in := map[string]any{"a": float64(3), "b": 1.5, "c": []any{float64(2), "s", map[string]any{"d": float64(-4)}}}
	want := map[string]any{"a": int64(3), "b": 1.5, "c": []any{int64(2), "s", map[string]any{"d": int64(-4)}}}
	if diff := cmp.Diff(want, Normalize(in)); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}
}

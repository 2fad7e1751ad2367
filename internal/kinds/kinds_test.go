package kinds

import "testing"

func TestClusterScoped(t *testing.T) {
	tests := []struct {
		kind string
		want bool
	}{
		{"CustomResourceDefinition", true},
		{"ClusterRole", true},
		{"ValidatingWebhookConfiguration", true},
		{"StorageClass", true},
		{"VolumeSnapshotClass", true},
		{"SecurityContextConstraints", true},
		{"Role", false},
		{"Deployment", false},
		{"ConfigMap", false},
		{"VolumeSnapshot", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := ClusterScoped(tc.kind); got != tc.want {
			t.Errorf("ClusterScoped(%q) = %v, want %v", tc.kind, got, tc.want)
		}
	}
}

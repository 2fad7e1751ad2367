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

// The order is the applier's: RBAC roles before their bindings, workloads before webhooks, and
// a kind the applier does not place after all it does.
func TestRank(t *testing.T) {
	order := []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
		"ConfigMap", "Service", "Deployment", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "NetworkPolicy"}
	for i := 1; i < len(order); i++ {
		if Rank(order[i-1]) >= Rank(order[i]) {
			t.Errorf("Rank(%s) = %d, not before Rank(%s) = %d", order[i-1], Rank(order[i-1]), order[i], Rank(order[i]))
		}
	}
}

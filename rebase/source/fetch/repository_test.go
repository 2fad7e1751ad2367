package fetch

import "testing"

func TestRepository(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4-3", "registry.redhat.io/lvms4/lvms-operator-bundle"},
		{"quay.io/openshift-release-dev/ocp-release@sha256:abc", "quay.io/openshift-release-dev/ocp-release"},
		{"127.0.0.1:5000/quay.io/x/y:1.2@sha256:abc", "127.0.0.1:5000/quay.io/x/y"},
		{"127.0.0.1:5000/quay.io/x/y", "127.0.0.1:5000/quay.io/x/y"},
	} {
		if got := Repository(tc.in); got != tc.want {
			t.Errorf("Repository(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

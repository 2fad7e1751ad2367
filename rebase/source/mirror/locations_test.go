package mirror

import (
	"reflect"
	"testing"
)

// TestLocations: which locations a pull tries, in order, for --mirror rewrites and IDMS/ICSP
// rules, by tag and by digest.
func TestLocations(t *testing.T) {
	mirrors := []Mirror{{"registry.redhat.io", "m.example/rh"}, {"registry.redhat.io/lvms4", "m.example/lvms"}}
	rules, err := parseIDMS("idms.yaml", []byte(`apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
spec:
  imageDigestMirrors:
  - source: registry.redhat.io/lvms4
    mirrors: [idms.example/lvms4, idms2.example/lvms4]
  - source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
    mirrors: [idms.example/art]
    mirrorSourcePolicy: NeverContactSource
---
apiVersion: operator.openshift.io/v1alpha1
kind: ImageContentSourcePolicy
spec:
  repositoryDigestMirrors:
  - source: registry.example/x
    mirrors: [icsp.example/x]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		repo     string
		byDigest bool
		want     []string
	}{
		{"registry.redhat.io/lvms4/lvms-operator-bundle", false, []string{"m.example/lvms/lvms-operator-bundle"}},
		{"registry.redhat.io/lvms4/lvms-rhel9-operator", true, []string{"idms.example/lvms4/lvms-rhel9-operator", "idms2.example/lvms4/lvms-rhel9-operator", "m.example/lvms/lvms-rhel9-operator"}},
		{"registry.redhat.io/openshift4/ose-csi", true, []string{"m.example/rh/openshift4/ose-csi"}},
		{"quay.io/openshift-release-dev/ocp-v4.0-art-dev", true, []string{"idms.example/art"}},
		{"registry.example/x/y", true, []string{"icsp.example/x/y", "registry.example/x/y"}},
		{"registry.redhat.io.evil/x", true, []string{"registry.redhat.io.evil/x"}},
	} {
		if got := Locations(tc.repo, tc.byDigest, rules, mirrors); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("locations(%s, %v) = %v, want %v", tc.repo, tc.byDigest, got, tc.want)
		}
	}
	if m, err := Parse("registry.redhat.io/=localhost:5000/rh/"); err != nil || m != (Mirror{"registry.redhat.io", "localhost:5000/rh"}) {
		t.Errorf("Parse: %+v %v", m, err)
	}
	if _, err := parseIDMS("x", []byte("kind: Pod\n")); err == nil {
		t.Error("wrong kind accepted")
	}
	for _, bad := range []string{"a", "=b", "a=", "registry.redhat.io=seeded/registry.redhat.io", "lvms4=quay.io/x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}

}

package auth

import "testing"

// Two keys naming the same registry ("quay.io", "https://quay.io") must resolve the same
// way every time, not by map iteration order.
func TestAuthLookupDeterministic(t *testing.T) {
	c := &authConfigFile{Auths: map[string]authEntry{
		"https://quay.io": {Username: "scheme"},
		"quay.io":         {Username: "plain"},
		"quay.io/":        {Username: "slash"},
		"http://quay.io":  {Username: "http"},
	}}
	first, _ := lookup(c, "quay.io/openshift-release-dev/ocp-release")
	for i := 0; i < 200; i++ {
		if e, _ := lookup(c, "quay.io/openshift-release-dev/ocp-release"); e != first {
			t.Fatalf("lookup gave %q then %q", first.Username, e.Username)
		}
	}
	if first.Username != "plain" {
		t.Errorf("lookup chose %q, want the key spelled exactly as the registry", first.Username)
	}
}

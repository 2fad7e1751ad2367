package mirror

import (
	"strings"
	"testing"
)

// TestParseMirrorRejects covers the --mirror values that would silently mean something else
// (Docker Hub, a URL, credentials on the command line, a repository that cannot exist).
func TestParseMirrorRejects(t *testing.T) {
	for _, bad := range []string{
		"https://registry.redhat.io=mirror.local/rh",
		"registry.redhat.io=http://mirror.local/rh",
		"registry.redhat.io=canary-user:canary-pass@mirror.local/rh",
		"registry.redhat.io=canary-token@mirror.local/rh",
		"registry.redhat.io=mirror.local/RH",
		"registry.redhat.io/LVMS4=mirror.local/rh",
		"registry.redhat.io=mirror.local/rh:tag",
		"registry.redhat.io=mirror.local/rh@sha256:0",
		"registry.redhat.io=mirror.local/rh x",
		"registry.redhat.io=mirror.local//rh",
	} {
		_, err := Parse(bad)
		if err == nil {
			t.Errorf("Parse(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "canary") {
			t.Errorf("Parse(%q) echoes credentials: %v", bad, err)
		}
	}
	for _, good := range []string{"registry.redhat.io=mirror.local:5000/rh", "Quay.IO=localhost/quay.io", "127.0.0.1:5000/a=[::1]:5000/b"} {
		if _, err := Parse(good); err != nil {
			t.Errorf("Parse(%q): %v", good, err)
		}
	}
}

// TestParseIDMSRejects: IDMS/ICSP mirrors are validated like --mirror, and unknown fields
// are errors (a misspelt "mirror:" would otherwise drop every mirror).
func TestParseIDMSRejects(t *testing.T) {
	head := "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: x\nspec:\n  imageDigestMirrors:\n"
	for name, doc := range map[string]string{
		"no registry host":   head + "  - source: registry.redhat.io/lvms4\n    mirrors: [mirror/lvms4]\n",
		"scheme":             head + "  - source: registry.redhat.io/lvms4\n    mirrors: [\"https://mirror.local/lvms4\"]\n",
		"credentials":        head + "  - source: registry.redhat.io/lvms4\n    mirrors: [\"canary-user:canary-pass@mirror.local/lvms4\"]\n",
		"upper-case path":    head + "  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local/LVMS4]\n",
		"bad source":         head + "  - source: lvms4\n    mirrors: [mirror.local/lvms4]\n",
		"unknown field":      head + "  - source: registry.redhat.io/lvms4\n    mirror: [mirror.local/lvms4]\n",
		"unknown spec field": head + "  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local/lvms4]\n  extra: 1\n",
		"bad policy":         head + "  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local/lvms4]\n    mirrorSourcePolicy: Sometimes\n",
		"no mirrors":         head + "  - source: registry.redhat.io/lvms4\n",
		"icsp unknown field": "kind: ImageContentSourcePolicy\nspec:\n  repositoryDigestMirrors:\n  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local/x]\n    mirrorSourcePolicy: NeverContactSource\n",
	} {
		_, err := parseIDMS("idms.yaml", []byte(doc))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "canary") {
			t.Errorf("%s: error echoes credentials: %v", name, err)
		}
		if !strings.Contains(err.Error(), "idms.yaml") {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
	ok := head + "  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local:5000/lvms4]\n    mirrorSourcePolicy: AllowContactingSource\nstatus: {}\n"
	if _, err := parseIDMS("idms.yaml", []byte(ok)); err != nil {
		t.Errorf("valid IDMS: %v", err)
	}
}

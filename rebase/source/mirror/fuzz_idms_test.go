package mirror

import (
	"strings"
	"testing"
)

// FuzzParseIDMS feeds arbitrary YAML to the IDMS/ICSP parser: no panic, and every accepted
// rule has a valid source and mirrors (as --mirror values), so no mirror can silently mean
// Docker Hub or carry credentials.
func FuzzParseIDMS(f *testing.F) {
	f.Add([]byte("apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata: {name: x}\nspec:\n  imageDigestMirrors:\n  - source: registry.redhat.io/lvms4\n    mirrors: [mirror.local:5000/lvms4]\n    mirrorSourcePolicy: NeverContactSource\n"))
	f.Add([]byte("kind: ImageContentSourcePolicy\nspec:\n  repositoryDigestMirrors:\n  - source: quay.io\n    mirrors: [m.example/q]\n---\nkind: ImageDigestMirrorSet\nspec: {imageDigestMirrors: []}\n"))
	f.Add([]byte("kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: a\n    mirrors: [\"u:p@b/c\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := parseIDMS("fuzz.yaml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\x00") {
				t.Fatalf("error carries a NUL: %q", err)
			}
			return
		}
		if len(rules) == 0 {
			t.Fatal("accepted a file without mirrors")
		}
		for _, r := range rules {
			if err := checkLocation(r.Source); err != nil {
				t.Fatalf("accepted source %q: %v", r.Source, err)
			}
			for _, m := range r.Mirrors {
				if err := checkLocation(m); err != nil || strings.Contains(m, "@") {
					t.Fatalf("accepted mirror %q: %v", m, err)
				}
			}
		}
	})
}

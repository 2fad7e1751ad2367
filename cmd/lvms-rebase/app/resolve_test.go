package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestResolveCommand(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{})
	cat, err := fixtures.ReadCatalog(testregistry.MustDefaultFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("DOCKER_CONFIG", "")
	cache := filepath.Join(t.TempDir(), "cache")
	work := t.TempDir()
	t.Chdir(work)
	base := append([]string{"resolve", "--cache-dir", cache}, reg.MirrorFlags()...)

	code, out, errOut := runMain(t, append(base, "--ocp", "4.18", "-o", "json")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res v1alpha1.Resolution
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkYAMLMatchesJSON(t, append(base, "--ocp", "4.18"), out, v1alpha1.KindResolution)
	b, _ := cat.NewestBundle("4.18")
	p, _ := cat.NewestPayload("4.18", "aarch64")
	if res.Bundle.Ref != b.Ref || res.Bundle.Digest != b.Digest || len(res.Payloads) != 2 || res.Payloads[1] != (v1alpha1.PayloadRef{Arch: "aarch64", Ref: p.Ref, Digest: p.Digest, Version: p.Version}) {
		t.Fatalf("resolution %+v", res)
	}
	if strings.Contains(out, reg.Host()) {
		t.Fatal("output names the mirror instead of the canonical reference")
	}
	// Nothing written but the cache.
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Fatalf("resolve wrote %v into the working directory", entries)
	}

	code, out, _ = runMain(t, append(base, "--ocp", "4.18")...)
	if code != ExitOK || !strings.Contains(out, "bundle   "+b.Ref) || !strings.Contains(out, "aarch64  "+p.Digest) && !strings.Contains(out, p.Digest) || !strings.Contains(out, "lvms-operator") {
		t.Fatalf("text output (exit %d):\n%s", code, out)
	}

	// -v 4 shows debug records; the default verbosity does not.
	code, _, errOut = runMain(t, append(base, "--ocp", "4.18", "-v", "4")...)
	if code != ExitOK || !strings.Contains(errOut, "image sources sources=bundle repo ") {
		t.Fatalf("-v 4: exit %d, stderr lacks the debug record:\n%s", code, errOut)
	}
	if _, _, errOut = runMain(t, append(base, "--ocp", "4.18")...); strings.Contains(errOut, "image sources") {
		t.Fatalf("default verbosity shows debug records:\n%s", errOut)
	}

	// Offline from the warm cache, with the registry gone.
	reg.Close()
	code, out2, errOut := runMain(t, append(base, "--ocp", "4.18", "--offline")...)
	if code != ExitOK || out2 != out {
		t.Fatalf("offline exit %d: %s\n%s", code, errOut, out2)
	}

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"resolve"}, ExitUsage, `required flag(s) "ocp" not set`},
		{append(base, "--ocp", "4.18", "-o", "wide"), ExitUsage, "expected text, json or yaml"},
		{append(base, "--ocp", "4.18", "--mirror", "bad"), ExitUsage, "SRC=DST"},
		{append(base, "--ocp", "4.18", "--idms-file", filepath.Join(work, "missing.yaml")), ExitError, "IDMS"},
		{append(base, "--ocp", "4.99", "--offline"), ExitError, ""},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
}

// checkYAMLMatchesJSON runs args with -o yaml and checks it parses to the same object as
// jsonOut (args' -o json), which carries apiVersion and kind.
func checkYAMLMatchesJSON(t *testing.T, args []string, jsonOut, kind string) {
	t.Helper()
	code, out, errOut := runMain(t, append(args, "-o", "yaml")...)
	if code != ExitOK {
		t.Fatalf("-o yaml: exit %d: %s", code, errOut)
	}
	var fromJSON, fromYAML map[string]any
	if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(out), &fromYAML); err != nil {
		t.Fatalf("-o yaml does not parse: %v\n%s", err, out)
	}
	if fromJSON["apiVersion"] != v1alpha1.APIVersion || fromJSON["kind"] != kind {
		t.Errorf("-o json: apiVersion %v, kind %v; want %s %s", fromJSON["apiVersion"], fromJSON["kind"], v1alpha1.APIVersion, kind)
	}
	if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
		t.Errorf("-o yaml and -o json differ (-json +yaml):\n%s", diff)
	}
}

package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/imageref"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
)

const lvmsDir = "assets/components/lvms/"

// variantRun is one rebase with a bundle variant: its -o json, stderr and PR body.
type variantRun struct {
	res    map[string]any
	stderr string
	body   string
	files  map[string][]byte
}

// runVariant rebases dir onto the variant's bundle and decodes what the run said.
func (e *e2e) runVariant(dir, repo string) (variantRun, int, string) {
	e.t.Helper()
	pr := filepath.Join(e.t.TempDir(), "pr.md")
	code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--lvms-bundle", repo+":"+fixtures.EvolutionTag, "--pr-body", pr, "-o", "json")
	if code != 0 {
		return variantRun{stderr: errOut}, code, errOut
	}
	var v variantRun
	if err := json.Unmarshal([]byte(out), &v.res); err != nil {
		e.t.Fatalf("decoding -o json: %v\n%s", err, out)
	}
	body, err := os.ReadFile(pr)
	if err != nil {
		e.t.Fatal(err)
	}
	v.stderr, v.body, v.files = errOut, string(body), readTree(e.t, dir)
	return v, code, errOut
}

// catalogImages are every relatedImage of every fixture bundle (plain, evolution, variants).
func catalogImages(t *testing.T) []fixtures.ImageInfo {
	t.Helper()
	cat, err := fixtures.ReadCatalog(testregistry.MustDefaultFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []fixtures.ImageInfo
	for _, b := range append(cat.Bundles, cat.Evolution...) {
		out = append(out, b.RelatedImages...)
	}
	return out
}

// literalBundleRefs lists every shipped file under assets/components/ that carries a registry
// reference with a tag or digest, or any repository, list digest or per-arch digest of a
// bundle image.
func literalBundleRefs(files map[string][]byte, images []fixtures.ImageInfo) []string {
	var bad []string
	for p, d := range files {
		if !strings.HasPrefix(p, "assets/components/") {
			continue
		}
		for _, r := range imageref.Find(string(d)) {
			bad = append(bad, p+": "+r.Ref)
		}
		for _, img := range images {
			needles := []string{img.Image[:strings.LastIndex(img.Image, "@")], imageref.DigestOf(img.Image)}
			for _, dg := range img.Arch {
				needles = append(needles, dg)
			}
			for _, n := range needles {
				if strings.Contains(string(d), n) {
					bad = append(bad, p+": "+n)
				}
			}
		}
	}
	return bad
}

// TestNoLiteralBundleImagesInGoldenTrees greps every shipped file of every golden tree.
func TestNoLiteralBundleImagesInGoldenTrees(t *testing.T) {
	images := catalogImages(t)
	entries, err := os.ReadDir(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		files := readTree(t, filepath.Join(goldenRoot, d.Name()))
		if len(files) == 0 {
			t.Fatalf("golden tree %s is empty", d.Name())
		}
		if bad := literalBundleRefs(files, images); len(bad) > 0 {
			t.Errorf("golden tree %s: literal bundle image references:\n%s", d.Name(), strings.Join(bad, "\n"))
		}
	}
}

// checkVariantRun holds what every successful variant run must show: no literal bundle image
// reference shipped, per-arch child digests in both release JSONs, the PR body's image claims
// true of the files, every warning in the PR body verbatim, the recipe presubmit passing.
func checkVariantRun(t *testing.T, dir, repo string, v variantRun, images []fixtures.ImageInfo) {
	t.Helper()
	if bad := literalBundleRefs(v.files, images); len(bad) > 0 {
		t.Errorf("literal bundle image references shipped:\n%s", strings.Join(bad, "\n"))
	}
	cat, err := fixtures.ReadCatalog(testregistry.MustDefaultFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range cat.Evolution {
		if b.Ref != repo+":"+fixtures.EvolutionTag {
			continue
		}
		for _, img := range b.RelatedImages {
			if img.Name == "lvms-must-gather" {
				continue // declared unshipped
			}
			key := strings.ReplaceAll(img.Name, "-", "_")
			repoName := img.Image[:strings.LastIndex(img.Image, "@")]
			for arch, goarch := range map[string]string{"x86_64": "amd64", "aarch64": "arm64"} {
				rel := "assets/release/release-" + arch + ".json"
				if want := `"` + key + `": "` + repoName + "@" + img.Arch[goarch] + `"`; !strings.Contains(string(v.files[rel]), want) {
					t.Errorf("%s lacks %s", rel, want)
				}
			}
		}
	}
	for _, u := range asSlice(v.res["imageUses"]) {
		m := u.(map[string]any)
		if !strings.Contains(string(v.files[m["file"].(string)]), "{{ .ReleaseImage."+m["key"].(string)+" }}") {
			t.Errorf("imageUses claims %v, the file does not carry it", m)
		}
	}
	for _, w := range asSlice(v.res["warnings"]) {
		if !strings.Contains(v.body, w.(string)) {
			t.Errorf("PR body lacks the warning %q", w)
		}
	}
	if !strings.Contains(v.body, "### Warnings") || !regexpCount(v.body) {
		t.Errorf("PR body has no Warnings section or no separate file counts:\n%s", v.body)
	}
	if err := recipe.Check(dir, recipe.RecipeFiles, recipe.Components); err != nil {
		t.Error(err)
	}
	presubmit(t, dir)
}

func regexpCount(body string) bool {
	return strings.Contains(body, " added, ") && strings.Contains(body, " removed.")
}

// TestBundleVariants runs every bundle-evolution variant on a tree a plain 4.18 rebase wrote,
// checks what it ships and says, and that a second run changes nothing.
func TestBundleVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the whole rebase about twenty times")
	}
	e := newE2E(t)
	base := copyTree(t, "../../../testdata/microshift")
	e.runJSON(base, "--ocp", "4.18", "--allow-base-mismatch")
	images := catalogImages(t)
	const placeholder = "{{ .ReleaseImage.subprovisioner_csi }}"
	cases := []struct {
		variant string
		check   func(t *testing.T, v variantRun)
	}{
		{"image-env", func(t *testing.T, v variantRun) {
			wantFileHas(t, v, lvmsDir+"lvms-operator_apps_v1_deployment.yaml", "name: RELATED_IMAGE_SUBPROVISIONER", placeholder)
			wantBody(t, v, "release key `subprovisioner_csi` in release-x86_64.json, release-aarch64.json; used as `"+placeholder+"` in `"+lvmsDir+"lvms-operator_apps_v1_deployment.yaml` spec.template.spec.containers[0].env[")
			wantRBAC(t, v, false, nil)
		}},
		{"image-arg", func(t *testing.T, v variantRun) {
			wantFileHas(t, v, lvmsDir+"lvms-operator_apps_v1_deployment.yaml", "--subprovisioner-image="+placeholder)
			wantBody(t, v, "spec.template.spec.containers[0].args[")
			wantRBAC(t, v, false, nil)
		}},
		{"image-annotation", func(t *testing.T, v variantRun) {
			wantFileHas(t, v, lvmsDir+"lvms-operator_apps_v1_deployment.yaml", fixtures.SubprovisionerImageAnnotation+": '"+placeholder+"'")
			wantBody(t, v, `spec.template.metadata.annotations["`+fixtures.SubprovisionerImageAnnotation+`"]`)
			wantRBAC(t, v, false, nil)
		}},
		{"rbac-escalation", func(t *testing.T, v variantRun) {
			wantRBAC(t, v, true, []string{"secrets", "wildcard", "cluster-write"})
			wantBody(t, v, "### Security review", "`ClusterRole lvms-operator` (secrets): `apiGroups=[\"\"] resources=[secrets] verbs=[get list watch]`",
				"`ClusterRole lvms-operator` (wildcard): `apiGroups=[lvm.topolvm.io] resources=[lvmvolumegroups] verbs=[*]`")
			// At the default verbosity the rules are counted on one line (-v 1 lists them).
			if !strings.Contains(v.stderr, "Warning: security review: 3 RBAC rules grant access a reviewer must check") {
				t.Errorf("stderr lacks the security review warning:\n%s", v.stderr)
			}
		}},
		{"rbac-benign", func(t *testing.T, v variantRun) {
			wantRBAC(t, v, true, nil)
			wantBody(t, v, "ClusterRole `lvms-operator`: added `apiGroups=[storage.k8s.io] resources=[volumeattachments] verbs=[get list watch]`")
			if strings.Contains(v.body, "Security review") || strings.Contains(v.stderr, "security review") {
				t.Errorf("benign RBAC change flagged for security review:\n%s\n%s", v.body, v.stderr)
			}
		}},
		{"evolution", func(t *testing.T, v variantRun) {
			wantWarning(t, v, "new workload: Deployment openshift-storage/subprovisioner-controller ("+lvmsDir+"subprovisioner-controller_apps_v1_deployment.yaml)")
			wantFileHas(t, v, lvmsDir+"subprovisioner-controller_apps_v1_deployment.yaml", "image: '"+placeholder+"'")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.variant, func(t *testing.T) {
			repo := fixtures.EvolutionRepo
			if tc.variant != "evolution" {
				repo = fixtures.VariantRepo(tc.variant)
			}
			dir := copyTree(t, base)
			v, code, errOut := e.runVariant(dir, repo)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkVariantRun(t, dir, repo, v, images)
			tc.check(t, v)
			again, code, errOut := e.runVariant(dir, repo)
			if code != 0 {
				t.Fatalf("second run: exit %d: %s", code, errOut)
			}
			if a, c, r := planPaths(again.res, "add"), planPaths(again.res, "change"), planPaths(again.res, "remove"); len(a)+len(c)+len(r) > 0 {
				t.Errorf("second run changed the tree: added %v, changed %v, removed %v", a, c, r)
			}
		})
	}
}

// TestWebhookNeedsService: a new webhook whose Deployment no bundle Service selects fails the
// run naming the webhook, the Service it needs and what the bundle provides, with the tree
// byte-identical; the same bundle with the Service passes and warns about the new workloads.
func TestWebhookNeedsService(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	e.runJSON(dir, "--ocp", "4.18", "--allow-base-mismatch")
	before := treeHash(t, dir)
	_, code, errOut := e.runVariant(dir, fixtures.VariantRepo("webhook-no-service"))
	if code != ExitError {
		t.Fatalf("exit %d, want %d: %s", code, ExitError, errOut)
	}
	for _, want := range []string{"webhook " + fixtures.SubprovisionerWebhook + " of deployment subprovisioner-controller needs a Service selecting app.kubernetes.io/name=subprovisioner-controller",
		"port 443→9443", "no shipped file creates one", "the bundle provides Service lvms-operator-metrics-service"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error lacks %q:\n%s", want, errOut)
		}
	}
	if treeHash(t, dir) != before {
		t.Fatal("the failed run changed the tree")
	}

	repo := fixtures.VariantRepo("webhook")
	v, code, errOut := e.runVariant(dir, repo)
	if code != 0 {
		t.Fatalf("with the Service: exit %d: %s", code, errOut)
	}
	checkVariantRun(t, dir, repo, v, catalogImages(t))
	hook := "msubprovisioner.kb.io-subprovisioner-controller_admissionregistration.k8s.io_v1_mutatingwebhookconfiguration.yaml"
	wantWarning(t, v, "new workload: Deployment openshift-storage/subprovisioner-controller",
		"new workload: MutatingWebhookConfiguration msubprovisioner.kb.io-subprovisioner-controller ("+lvmsDir+hook+"): every matching API request on every MicroShift node calls Service openshift-storage/subprovisioner-webhook-service")
	wantFileHas(t, v, lvmsDir+"subprovisioner-webhook-service_v1_service.yaml", "name: subprovisioner-webhook-service")
	wantFileHas(t, v, lvmsDir+hook, "name: subprovisioner-webhook-service")
	again, code, errOut := e.runVariant(dir, repo)
	if code != 0 || len(planPaths(again.res, "add"))+len(planPaths(again.res, "change"))+len(planPaths(again.res, "remove")) > 0 {
		t.Errorf("second run: exit %d %s, plan %v", code, errOut, again.res["plan"])
	}
}

func wantFileHas(t *testing.T, v variantRun, path string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(string(v.files[path]), w) {
			t.Errorf("%s lacks %q:\n%s", path, w, v.files[path])
		}
	}
}

func wantBody(t *testing.T, v variantRun, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(v.body, w) {
			t.Errorf("PR body lacks %q:\n%s", w, v.body)
		}
	}
}

func wantWarning(t *testing.T, v variantRun, wants ...string) {
	t.Helper()
	all, _ := json.Marshal(v.res["warnings"])
	for _, w := range wants {
		if !strings.Contains(string(all), w) || !strings.Contains(v.stderr, w) || !strings.Contains(v.body, w) {
			t.Errorf("warning %q not in -o json, stderr and PR body:\njson %s\nstderr %s", w, all, v.stderr)
		}
	}
}

// wantRBAC checks the -o json rbac section: changed or not, and the escalation classes.
func wantRBAC(t *testing.T, v variantRun, changed bool, classes []string) {
	t.Helper()
	rv, _ := v.res["rbac"].(map[string]any)
	if rv == nil || rv["changed"] != changed {
		t.Errorf("rbac %v, want changed=%v", rv, changed)
		return
	}
	var got []string
	for _, e := range asSlice(rv["escalations"]) {
		m := e.(map[string]any)
		if m["role"] == "" || m["rule"] == "" {
			t.Errorf("escalation without role or rule: %v", m)
		}
		got = append(got, m["class"].(string))
	}
	if strings.Join(got, ",") != strings.Join(classes, ",") {
		t.Errorf("escalation classes %v, want %v", got, classes)
	}
	if !changed && !strings.Contains(v.body, "RBAC did not change.") {
		t.Errorf("PR body does not say the RBAC did not change:\n%s", v.body)
	}
}

package applier

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// requirementsTable is every supported MicroShift branch's go.mod (release-4.17 … main), generated
// by `go run ./hack/genmicroshift -reference ../shared/reference/microshift` from the repository
// root.
const requirementsTable = "testdata/microshift-requirements.txt"

// branchRequirements maps branch → module → required version; module "go" is the go directive.
func branchRequirements(t *testing.T) (map[string]map[string]string, []string) {
	t.Helper()
	f, err := os.Open(requirementsTable)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("%s: malformed line %q", requirementsTable, line)
		}
		if out[fields[0]] == nil {
			out[fields[0]] = map[string]string{}
			order = append(order, fields[0])
		}
		out[fields[0]][fields[1]] = fields[2]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, order
}

// goModRequirements reads a go.mod through the go command (`go mod edit -json`): its go
// directive, every requirement and which of them are direct.
func goModRequirements(t *testing.T, path string) (goVersion string, reqs map[string]string, direct []string) {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", path).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", path, err)
	}
	var mod struct {
		Go      string
		Require []struct {
			Path, Version string
			Indirect      bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	reqs = map[string]string{}
	for _, r := range mod.Require {
		reqs[r.Path] = r.Version
		if !r.Indirect {
			direct = append(direct, r.Path)
		}
	}
	return mod.Go, reqs, direct
}

// compareModuleVersions orders two module versions (semver, pseudo-versions included: their
// pre-release part starts with a fixed-width timestamp) or two go directives.
func compareModuleVersions(a, b string) (int, error) {
	va, err := version.ParseSemantic(strings.TrimPrefix(a, "v"))
	if err != nil {
		va, err = version.ParseGeneric(a)
		if err != nil {
			return 0, err
		}
	}
	vb, err := version.ParseSemantic(strings.TrimPrefix(b, "v"))
	if err != nil {
		vb, err = version.ParseGeneric(b)
		if err != nil {
			return 0, err
		}
	}
	return va.Compare(vb.String())
}

// notNewer reports (as test errors) every requirement in reqs newer than what a branch requires.
func notNewer(t *testing.T, what string, reqs map[string]string, branches map[string]map[string]string, order []string) {
	t.Helper()
	paths := make([]string, 0, len(reqs))
	for p := range reqs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, b := range order {
		for _, p := range paths {
			have, ok := branches[b][p]
			if !ok {
				continue
			}
			c, err := compareModuleVersions(reqs[p], have)
			if err != nil {
				t.Errorf("comparing %s %s with %s's %s: %v", p, reqs[p], b, have, err)
			} else if c > 0 {
				t.Errorf("%s %s %s is newer than MicroShift %s's %s: requiring the applier would move it", what, p, reqs[p], b, have)
			}
		}
	}
}

// skipInEditedCopy skips in hack/test-compat.sh's copies of the module whose go.mod it upgraded
// on purpose (other client-go minors, newest dependencies); its "oldest" copy runs the test.
func skipInEditedCopy(t *testing.T) {
	if v := os.Getenv("APPLIER_COMPAT_EDITED"); v != "" {
		t.Skipf("go.mod upgraded by hack/test-compat.sh (%s)", v)
	}
}

// Go's minimal version selection leaves a MicroShift branch as it is when it requires the
// applier only if nothing the applier brings into its module graph is newer than what the branch
// requires. The applier's own packages import only its direct requirements, so each branch must
// already require those; its indirect requirements are client-go v0.30's, and a branch whose own
// (newer, forked) client-go does not use one of them never builds it: such a module is only
// recorded in the branch's go.sum, not in its go.mod or vendor/.
func TestRequirementsFitEveryBranch(t *testing.T) {
	skipInEditedCopy(t)
	branches, order := branchRequirements(t)
	if len(order) == 0 || order[0] != "release-4.17" || order[len(order)-1] != "main" {
		t.Fatalf("%s: branches %v, want release-4.17 … main", requirementsTable, order)
	}
	goVersion, reqs, direct := goModRequirements(t, "go.mod")
	reqs["go"] = goVersion
	for _, b := range order {
		for _, p := range append(direct, "go") {
			if _, ok := branches[b][p]; !ok {
				t.Errorf("applier go.mod requires %s directly, which MicroShift %s does not require", p, b)
			}
		}
	}
	notNewer(t, "applier go.mod requires", reqs, branches, order)
}

// The importer's module graph holds the applier's requirements and, for modules without graph
// pruning, theirs: every version in `go mod graph` must also be no newer than a branch's.
func TestModuleGraphFitsEveryBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod graph (may need the module proxy)")
	}
	skipInEditedCopy(t)
	branches, order := branchRequirements(t)
	out, err := exec.Command("go", "mod", "graph").Output()
	if err != nil {
		t.Fatalf("go mod graph: %v", err)
	}
	graph := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		p, v, ok := strings.Cut(f[1], "@")
		if !ok {
			continue
		}
		if old, seen := graph[p]; !seen {
			graph[p] = v
		} else if c, err := compareModuleVersions(v, old); err == nil && c > 0 {
			graph[p] = v
		}
	}
	if len(graph) < 20 {
		t.Fatalf("go mod graph lists %d modules; want the whole graph", len(graph))
	}
	notNewer(t, "applier module graph has", graph, branches, order)
}

func TestCompareModuleVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v0.30.1", "v0.30.14", -1},
		{"v0.30.14", "v1.31.14", -1},
		{"v1.3.0", "v1.3.0", 0},
		{"v1.4.0", "v1.3.0", 1},
		{"v0.0.0-20221116044647-bc3834ca7abd", "v0.0.0-20241014173422-cfa47c3a1cc8", -1},
		{"v0.0.0-20240228011516-70dd3763d340", "v0.0.0-20240228011516-70dd3763d340", 0},
		{"v0.13.5-0.20230601165947-6ce0bf390ce3", "v0.13.5", -1},
		{"v0.13.5-0.20230601165947-6ce0bf390ce3", "v0.13.4", 1},
		{"v2.2.1+incompatible", "v2.2.1+incompatible", 0},
		{"v2.2.1+incompatible", "v2.3.0+incompatible", -1},
		{"1.22.0", "1.22.5", -1},
		{"1.22", "1.22.0", 0},
		{"1.23.0", "1.22.5", 1},
	} {
		got, err := compareModuleVersions(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("compareModuleVersions(%q, %q) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
}

package lvmsrebase

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// microshiftSymbols is generated from a stored copy of MicroShift's sources by
// `go run ./hack/genmicroshift -reference ../shared/reference/microshift`.
const microshiftSymbols = "testdata/microshift-symbols.txt"

// readSymbols maps branch → set of "path" and "path:Name" entries.
func readSymbols(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(microshiftSymbols)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		branch, entry, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(branch, "#") {
			continue
		}
		if out[branch] == nil {
			out[branch] = map[string]bool{}
		}
		out[branch][entry] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// microshiftRef is how docs/embedding.md names MicroShift code: `go.mod`, `pkg/…/file.go` or
// `pkg/…/file.go:Name` (`Type.Method` for a method).
var microshiftRef = regexp.MustCompile("`((?:assets|pkg|cmd)/[A-Za-z0-9_./-]+\\.go(?::[A-Za-z_][A-Za-z0-9_.]*)?|go\\.mod)`")

// docRefs returns the MicroShift references of the doc by branch: those under a heading that
// names release-4.17 are release-4.17's, all others main's.
func docRefs(t *testing.T, doc string) map[string][]string {
	t.Helper()
	refs := map[string][]string{}
	branch := "main"
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			branch = "main"
			if strings.Contains(line, "release-4.17") {
				branch = "release-4.17"
			}
		}
		for _, m := range microshiftRef.FindAllStringSubmatch(line, -1) {
			refs[branch] = append(refs[branch], m[1])
		}
	}
	return refs
}

// docs/embedding.md is a patch a MicroShift maintainer follows line by line: every file and
// function it names exists on the branch it talks about, and every function of the two files
// the patch empties is named, so none is left behind.
func TestEmbeddingDocNamesRealMicroShiftCode(t *testing.T) {
	data, err := os.ReadFile("docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	syms := readSymbols(t)
	refs := docRefs(t, string(data))
	named := map[string]bool{}
	for branch, list := range refs {
		for _, r := range list {
			named[branch+" "+r] = true
			if !syms[branch][r] {
				t.Errorf("docs/embedding.md names %s on MicroShift %s, which does not exist there (%s)", r, branch, microshiftSymbols)
			}
		}
	}
	if len(refs["main"]) < 10 || len(refs["release-4.17"]) < 3 {
		t.Fatalf("docs/embedding.md names %d MicroShift main and %d release-4.17 files/functions; want the whole patch", len(refs["main"]), len(refs["release-4.17"]))
	}
	for _, branch := range []string{"main", "release-4.17"} {
		for entry := range syms[branch] {
			file, _, isDecl := strings.Cut(entry, ":")
			removed := file == "pkg/components/storage.go" || file == "pkg/components/csi-snapshot-controller.go"
			if isDecl && removed && !named[branch+" "+entry] && entry != "pkg/components/storage.go:startCSIPlugin" {
				t.Errorf("docs/embedding.md does not say what happens to %s on %s", entry, branch)
			}
		}
	}
}

// The startCSIPlugin the doc shows is the one hack/consumer compiles and runs against a real
// API server (hack/test-consumer.sh), apart from the consumer's test seams.
func TestEmbeddingDocPatchIsTheConsumer(t *testing.T) {
	data, err := os.ReadFile("docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, b := range strings.Split(string(data), "```go\n")[1:] {
		code, _, _ := strings.Cut(b, "```")
		if strings.Contains(code, "func startCSIPlugin(") {
			block = code
			break
		}
	}
	if block == "" {
		t.Fatal("docs/embedding.md has no ```go block with func startCSIPlugin")
	}
	src, err := os.ReadFile("hack/consumer/pkg/components/storage.go")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(src), "\n") {
		if !strings.HasSuffix(strings.TrimRight(line, "\n"), "// consumer-only") {
			kept = append(kept, line)
		}
	}
	if want := strings.Join(kept, ""); block != want {
		t.Errorf("docs/embedding.md's startCSIPlugin differs from hack/consumer/pkg/components/storage.go (without its consumer-only lines):\n--- doc\n%s\n--- consumer\n%s", block, want)
	}
}

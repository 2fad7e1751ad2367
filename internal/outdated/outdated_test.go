package outdated

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestDefaultBranchesAreMicroShiftBranchesWithAReleaseJSON: main, release-4.Y and release-5.Y
// whose committed tree has the x86_64 release JSON, in refname order; other names, and
// those branches without the file, are left out.
func TestDefaultBranchesAreMicroShiftBranchesWithAReleaseJSON(t *testing.T) {
	isolate(t)
	withJSON := map[string]string{recorded.BaseFile: "{}\n"}
	branches := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"release-5.0", withJSON, true},
		{"main", withJSON, true},
		{"release-4.17", withJSON, true},
		{"release-4.99", map[string]string{"README.md": "no assets\n"}, false},
		{"release-4.16", map[string]string{"assets/release/release-aarch64.json": "{}\n"}, false},
		{"release-6.0", withJSON, false},
		{"release-4.18-hotfix", withJSON, false},
		{"feature", withJSON, false},
		{"jdoe/main", withJSON, false},
		// Checked out below with the file staged but not committed.
		{"release-4.19", map[string]string{"README.md": "no assets\n"}, false},
	}
	var specs []branch
	var want []string
	for _, b := range branches {
		specs = append(specs, branch{name: b.name, write: b.files})
		if b.want {
			want = append(want, b.name)
		}
	}
	slices.Sort(want)
	repo := makeClone(t, specs)
	gitrepo.Git(t, repo, "checkout", "-q", "release-4.19")
	gitrepo.WriteFile(t, repo, recorded.BaseFile, "{}\n", 0o644)
	gitrepo.Git(t, repo, "add", recorded.BaseFile)

	got, err := DefaultBranches(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultBranches (-want +got):\n%s", diff)
	}
}

// TestCheckAndDefaultBranchesFailOutsideAClone: a directory that is not a clone is an error
// of the whole check, with or without branches named, not a report of failed branches.
func TestCheckAndDefaultBranchesFailOutsideAClone(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if got, err := DefaultBranches(t.Context(), dir); err == nil {
		t.Errorf("DefaultBranches(%s) = %q, want an error", dir, got)
	}
	for _, branches := range [][]string{nil, {"main"}} {
		if rep, err := Check(t.Context(), Options{Repo: dir, Branches: branches, Source: source.Options{CacheDir: t.TempDir()}}); err == nil {
			t.Errorf("Check of %s, branches %q: %+v, want an error", dir, branches, rep)
		}
	}
}

// TestCheckReadsTheVersionOfADigestPinnedPayload: a last_rebase.sh that pins its payloads by
// digest alone names no version; the payload a run would take is the one its release-metadata
// records (the branch's own nightly: only the bundle lags), and a pin of another minor's
// payload is an error naming last_rebase.sh, as a run fails on it.
func TestCheckReadsTheVersionOfADigestPinnedPayload(t *testing.T) {
	isolate(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	cat := catalog(t)
	fx, err := testregistry.FixturesDir()
	if err != nil {
		t.Fatal(err)
	}
	n417 := nightly(t, cat, "4.17")
	pins := func(pick func(p fixtures.PayloadInfo) bool) map[string]string {
		refs := map[string]string{}
		for _, p := range cat.Payloads {
			if pick(p) {
				refs[p.Arch] = source.Repository(p.Ref) + "@" + p.Digest
			}
		}
		if len(refs) != 2 {
			t.Fatalf("want an x86_64 and an aarch64 payload to pin, got %q", refs)
		}
		return map[string]string{recorded.LastRebaseFile: "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \"" + refs["x86_64"] + "\" \"" + refs["aarch64"] + "\"\n"}
	}
	tree := filepath.Join(fx, fixtures.TreesDir, "4.17")
	repo := makeClone(t, []branch{
		{name: "release-4.17", from: tree, write: pins(func(p fixtures.PayloadInfo) bool { return p.Nightly && p.Minor == "4.17" })},
		{name: "release-4.17-other", from: tree, write: pins(func(p fixtures.PayloadInfo) bool {
			return p.Newest && p.Minor == "4.18" && p.Arch != "multi"
		})},
	})
	rep, err := Check(t.Context(), Options{Repo: repo, Branches: []string{"release-4.17", "release-4.17-other"}, Source: sourceOptions(t, reg)})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Items[0]
	if got.Payload != (Pair{n417, n417}) || got.PayloadRule != "tree" || got.Status != Outdated || strings.Contains(got.Reason, "payload") {
		t.Errorf("digest-pinned release-4.17: payload %+v, rule %s, %s: %q; want %s current, only the bundle lagging", got.Payload, got.PayloadRule, got.Status, got.Reason, n417)
	}
	if other := rep.Items[1]; other.Status != Error || !strings.Contains(other.Reason, recorded.LastRebaseFile) || !strings.Contains(other.Reason, "4.18") {
		t.Errorf("a 4.18 payload pinned on 4.17: %s %q, want an error naming %s and the payload's minor", other.Status, other.Reason, recorded.LastRebaseFile)
	}
}

// TestCheckReportsEveryBranchInTheOrderGiven runs Check on a clone with a branch of each
// kind: one whose bundle lags (release-4.17, read from its records), one whose bundle and
// payload lag (main, no last_rebase.sh: the newest payload rule), one a run just rebased
// (release-4.22, from its lock), one whose release JSON has no release.base and one that
// does not exist. Expected values come from the fixture catalog, not from the code.
func TestCheckReportsEveryBranchInTheOrderGiven(t *testing.T) {
	isolate(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	repo := checkClone(t)
	want := wantStatuses(t, repo)
	given := []string{"release-4.22", "main", "release-4.99", "release-4.17", "release-4.21"}
	for _, tc := range []struct {
		name     string
		branches []string
		parallel int
		// items are the branches reported, in order (nil: branches).
		items            []string
		outdated, errors []string
	}{{
		name: "two at a time", branches: given, parallel: 2,
		outdated: []string{"main", "release-4.17"}, errors: []string{"release-4.99", "release-4.21"},
	}, {
		// The broken branches finish first; they are still reported where they were given.
		name: "all at once", branches: given, parallel: len(given),
		outdated: []string{"main", "release-4.17"}, errors: []string{"release-4.99", "release-4.21"},
	}, {
		name: "no branches: the default ones, in refname order", parallel: 0,
		items:    []string{"main", "release-4.17", "release-4.21", "release-4.22"},
		outdated: []string{"main", "release-4.17"}, errors: []string{"release-4.21"},
	}, {
		// A CI matrix reads the lists: empty, never null.
		name: "a current branch alone: empty lists", branches: []string{"release-4.22"}, parallel: 1,
		outdated: []string{}, errors: []string{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(t.Context(), Options{Repo: repo, Branches: tc.branches, Source: sourceOptions(t, reg), Parallel: tc.parallel})
			if err != nil {
				t.Fatal(err)
			}
			wantRep := &Report{Items: []Status{}, Outdated: tc.outdated, Errors: tc.errors}
			items := tc.items
			if items == nil {
				items = tc.branches
			}
			for _, b := range items {
				wantRep.Items = append(wantRep.Items, want[b])
			}
			checkErrorReasons(t, rep)
			if diff := cmp.Diff(wantRep, rep); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckListsEachRepositoryOncePerRun: the branches of a run share one source, so checking
// three branches lists the tags no more often than checking one.
func TestCheckListsEachRepositoryOncePerRun(t *testing.T) {
	isolate(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	repo := checkClone(t)
	tagLists := func(branches ...string) int {
		reg.ResetStats()
		rep, err := Check(t.Context(), Options{Repo: repo, Branches: branches, Source: sourceOptions(t, reg), Parallel: len(branches)})
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("Check %q: %v %+v", branches, err, rep)
		}
		return reg.Stats().Requests(http.MethodGet, "/tags/list")
	}
	// main needs both repositories (bundle and payload tags), the others the bundle's only.
	one := tagLists("main")
	three := tagLists("main", "release-4.17", "release-4.22")
	if one == 0 || three != one {
		t.Errorf("tag-list requests: %d for one branch, %d for three; want the same, and some", one, three)
	}
}

// checkErrorReasons verifies that each branch reported as an error says why, then blanks the
// reason (git's and recorded's wording) so that the rest of the report compares whole.
func checkErrorReasons(t *testing.T, rep *Report) {
	t.Helper()
	causes := map[string]string{"release-4.21": recorded.BaseFile, "release-4.99": "not a local branch"}
	for i := range rep.Items {
		it := &rep.Items[i]
		if it.Status != Error {
			continue
		}
		if c := causes[it.Branch]; c == "" || !strings.Contains(it.Reason, c) || !strings.Contains(it.Reason, it.Branch) {
			t.Errorf("%s: reason %q, want one naming the branch and %q", it.Branch, it.Reason, c)
		}
		it.Reason = ""
	}
}

// wantStatuses are the statuses of checkClone's branches (and of release-4.99, which it lacks).
// The LVMS minors are the era policy's for the fixture registry (no 4.22 bundle: 4.21); the
// newest bundles and payloads and the trees' nightlies are the fixture catalog's.
func wantStatuses(t *testing.T, repo string) map[string]Status {
	t.Helper()
	cat := catalog(t)
	b417, b421 := newestBundle(t, cat, "4.17"), newestBundle(t, cat, "4.21")
	n417, n422, n50 := nightly(t, cat, "4.17"), nightly(t, cat, "4.22"), nightly(t, cat, "5.0")
	p50, ok := cat.NewestPayload("5.0", "x86_64")
	if !ok {
		t.Fatal("the fixture catalog has no newest 5.0 payload")
	}
	return map[string]Status{
		"main": {Branch: "main", Commit: revParse(t, repo, "main"), OCP: "5.0", LVMS: "4.21",
			RecordedFrom: "records", Bundle: Pair{"v4.20.2", b421}, Payload: Pair{n50, p50.Version}, PayloadRule: "newest",
			Signatures: SignaturesNotRecorded, Status: "outdated", Reason: "bundle v4.20.2 → " + b421 + "; payload " + n50 + " → " + p50.Version},
		"release-4.17": {Branch: "release-4.17", Commit: revParse(t, repo, "release-4.17"), OCP: "4.17", LVMS: "4.17",
			RecordedFrom: "records", Bundle: Pair{"v4.17.7", b417}, Payload: Pair{n417, n417}, PayloadRule: "tree",
			Signatures: SignaturesNotRecorded, Status: "outdated", Reason: "bundle v4.17.7 → " + b417},
		"release-4.22": {Branch: "release-4.22", Commit: revParse(t, repo, "release-4.22"), OCP: "4.22", LVMS: "4.21",
			RecordedFrom: "lock", Bundle: Pair{b421, b421}, Payload: Pair{n422, n422}, PayloadRule: "tree",
			// the golden tree's lock was verified under the tests' policy, not the built-in one
			Signatures: SignaturesOtherPolicy, Status: "current"},
		"release-4.21": {Branch: "release-4.21", Commit: revParse(t, repo, "release-4.21"), Status: "error"},
		"release-4.99": {Branch: "release-4.99", Status: "error"},
	}
}

// checkClone is a MicroShift-like clone made from the generated trees: release-4.17 and
// main (5.0, without last_rebase.sh) before a storage rebase, release-4.22 as a run left it
// (testdata/golden/tree-4.22, with its lock) and release-4.21 with no release.base.
func checkClone(t *testing.T) string {
	t.Helper()
	fx, err := testregistry.FixturesDir()
	if err != nil {
		t.Fatal(err)
	}
	tree := func(minor string) string { return filepath.Join(fx, fixtures.TreesDir, minor) }
	return makeClone(t, []branch{
		{name: "main", from: tree("5.0"), remove: []string{recorded.LastRebaseFile}},
		{name: "release-4.17", from: tree("4.17")},
		{name: "release-4.21", from: tree("5.0"), write: map[string]string{recorded.BaseFile: "{\"images\": {}}\n"}},
		{name: "release-4.22", from: filepath.Join(fx, "golden", "tree-4.22")},
	})
}

// branch is one branch of makeClone: a directory copied in, then files written and removed.
type branch struct {
	name, from string
	write      map[string]string
	remove     []string
}

// makeClone commits each branch as an orphan with exactly its files.
func makeClone(t *testing.T, branches []branch) string {
	t.Helper()
	dir := t.TempDir()
	gitrepo.Git(t, dir, "init", "-q")
	for _, b := range branches {
		gitrepo.Git(t, dir, "checkout", "-q", "--orphan", b.name)
		gitrepo.Git(t, dir, "rm", "-rfq", "--ignore-unmatch", ".")
		if b.from != "" {
			if err := os.CopyFS(dir, os.DirFS(b.from)); err != nil {
				t.Fatal(err)
			}
		}
		for p, data := range b.write {
			gitrepo.WriteFile(t, dir, p, data, 0o644)
		}
		for _, p := range b.remove {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
		}
		gitrepo.Git(t, dir, "add", "-A")
		gitrepo.Git(t, dir, "commit", "-qm", "tree of "+b.name)
	}
	return dir
}

// isolate keeps the developer's credentials and git configuration out of the test, and any
// repository above the temporary directories.
func isolate(t *testing.T) {
	t.Helper()
	testregistry.NoCredentials(t)
	gitrepo.Isolate(t)
}

// sourceOptions point the upstream registries at the loopback registry, with a cache of the
// test's own.
func sourceOptions(t *testing.T, reg *testregistry.Registry) source.Options {
	return source.Options{
		Mirrors: []source.Mirror{
			{Source: "registry.redhat.io", Mirror: reg.Host() + "/registry.redhat.io"},
			{Source: "quay.io", Mirror: reg.Host() + "/quay.io"},
			{Source: "registry.ci.openshift.org", Mirror: reg.Host() + "/registry.ci.openshift.org"},
		},
		CacheDir: t.TempDir(),
	}
}

func catalog(t *testing.T) *fixtures.Catalog {
	t.Helper()
	cat, err := fixtures.ReadCatalog(testregistry.MustDefaultFixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func newestBundle(t *testing.T, cat *fixtures.Catalog, minor string) string {
	t.Helper()
	b, ok := cat.NewestBundle(minor)
	if !ok {
		t.Fatalf("the fixture catalog has no newest %s bundle", minor)
	}
	return b.Tag
}

// nightly is the x86_64 nightly a generated tree of minor is based on (its release.base).
func nightly(t *testing.T, cat *fixtures.Catalog, minor string) string {
	t.Helper()
	for _, p := range cat.Payloads {
		if p.Nightly && p.Minor == minor && p.Arch == "x86_64" {
			return p.Version
		}
	}
	t.Fatalf("the fixture catalog has no %s x86_64 nightly", minor)
	return ""
}

func revParse(t *testing.T, repo, branch string) string {
	t.Helper()
	return strings.TrimSpace(gitrepo.Git(t, repo, "rev-parse", "refs/heads/"+branch))
}

// TestSignaturesColumn: what a branch's lock records about its pins' signatures.
func TestSignaturesColumn(t *testing.T) {
	d := "sha256:" + strings.Repeat("1", 64)
	signed := provenance.Record{Role: "bundle", Image: "registry.redhat.io/x", Digest: d, Status: provenance.StatusSigned,
		Signatures: []provenance.Signature{{Format: provenance.FormatCosign, Class: provenance.ClassRedHat}}}
	ci := provenance.Record{Role: "payload x86_64", Image: "registry.ci.openshift.org/ocp/release", Digest: d, Status: provenance.StatusSigned,
		Signatures: []provenance.Signature{{Format: provenance.FormatAtomic, Class: provenance.ClassCI}}}
	unsigned := provenance.Record{Role: "lvms_operator x86_64", Image: "quay.io/lvms_dev/op", Digest: d, Status: provenance.StatusUnsigned, Reason: "r"}
	for _, tc := range []struct {
		name     string
		rep      *provenance.Report
		policy   string
		want     string
		unsigned int
	}{
		{"no provenance", nil, "", SignaturesNotRecorded, 0},
		{"verified", &provenance.Report{Policy: provenance.BuiltinSource, Records: []provenance.Record{signed}}, "", SignaturesVerified, 0},
		{"ci only", &provenance.Report{Policy: provenance.BuiltinSource, Records: []provenance.Record{signed, ci}}, provenance.BuiltinSource, SignaturesCIOnly, 0},
		{"unsigned", &provenance.Report{Policy: provenance.BuiltinSource, AllowUnsigned: true, Records: []provenance.Record{signed, unsigned}}, "", SignaturesUnsigned, 1},
		{"other policy", &provenance.Report{Policy: d, Records: []provenance.Record{signed}}, "", SignaturesOtherPolicy, 0},
		{"same file policy", &provenance.Report{Policy: d, Records: []provenance.Record{signed}}, d, SignaturesVerified, 0},
	} {
		got, list := signatures(tc.rep, tc.policy)
		if got != tc.want || len(list) != tc.unsigned {
			t.Errorf("%s: %s %v, want %s with %d unsigned", tc.name, got, list, tc.want, tc.unsigned)
		}
	}
}

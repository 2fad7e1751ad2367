package outdated

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestCheckRefusesNamesThatAreNoBranches: an empty list, a blank name, a revision (main~1,
// HEAD^, @{-1}) or a name given twice is the caller's mistake, an *option.Error naming the
// branches option, before anything is read — never a check of nothing, of the defaults, or
// of the commit a revision names.
func TestCheckRefusesNamesThatAreNoBranches(t *testing.T) {
	isolate(t)
	repo := makeClone(t, []branch{{name: "main", write: map[string]string{recorded.BaseFile: "{}\n"}}})
	for _, branches := range [][]string{{}, {""}, {" "}, {"main", ""}, {"main~1"}, {"HEAD^"}, {"@{-1}"}, {"main..main"},
		{" main"}, {"main", "main"}, {"-x"}} {
		rep, err := Check(t.Context(), Options{Repo: repo, Branches: branches, Source: source.Options{CacheDir: t.TempDir()}})
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Option != option.Branches {
			t.Errorf("branches %q: %+v, %v; want an *option.Error of %s", branches, rep, err, option.Branches)
		}
	}
}

// TestCheckRefusesPins: a pinned bundle or payload names one tree's inputs; outdated answers
// what a plain run of each branch picks, so the pin is refused, not ignored.
func TestCheckRefusesPins(t *testing.T) {
	isolate(t)
	repo := makeClone(t, []branch{{name: "main", write: map[string]string{recorded.BaseFile: "{}\n"}}})
	for _, tc := range []struct {
		src  source.Options
		want option.Name
	}{
		{source.Options{BundleRef: "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.0"}, option.LVMSBundle},
		{source.Options{ReleaseRefs: map[string]string{"aarch64": "quay.io/x:4.18.1-aarch64"}}, option.For(option.OCPRelease, "aarch64")},
	} {
		tc.src.CacheDir = t.TempDir()
		_, err := Check(t.Context(), Options{Repo: repo, Source: tc.src})
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Option != tc.want {
			t.Errorf("%+v: %v, want an *option.Error of %s", tc.src, err, tc.want)
		}
	}
}

// TestCheckInACIClone: a clone as CI checks it out (detached HEAD, the branches only as
// origin/*) has no local branch to check by default; that is an error naming what is missing
// and the remote-tracking branches it has, not "every branch current".
func TestCheckInACIClone(t *testing.T) {
	isolate(t)
	repo := makeClone(t, []branch{
		{name: "main", write: map[string]string{recorded.BaseFile: "{}\n"}},
		{name: "release-4.18", write: map[string]string{recorded.BaseFile: "{}\n"}},
	})
	for _, b := range []string{"main", "release-4.18"} {
		gitrepo.Git(t, repo, "update-ref", "refs/remotes/origin/"+b, "refs/heads/"+b)
	}
	gitrepo.Git(t, repo, "checkout", "-q", "--detach")
	gitrepo.Git(t, repo, "branch", "-q", "-D", "main", "release-4.18")
	rep, err := Check(t.Context(), Options{Repo: repo, Source: source.Options{CacheDir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "no branch to check") || !strings.Contains(err.Error(), "origin/main, origin/release-4.18") {
		t.Fatalf("Check: %+v, %v; want an error naming the empty set and the remote-tracking branches", rep, err)
	}
	// Named, such a branch is that branch's error, with the way out.
	rep, err = Check(t.Context(), Options{Repo: repo, Branches: []string{"release-4.18"}, Source: source.Options{CacheDir: t.TempDir()}})
	if err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Items[0].Reason, "git branch release-4.18 origin/release-4.18") {
		t.Fatalf("Check release-4.18: %+v, %v", rep, err)
	}
}

// TestCheckReportsWhatANameIs: a name that is a tag, a commit id or nothing is that branch's
// error saying what it is, while the others are checked; a record committed as a symbolic
// link (to /dev/zero) is its branch's error too, not the process's end.
func TestCheckReportsWhatANameIs(t *testing.T) {
	isolate(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	repo := checkClone(t)
	gitrepo.Git(t, repo, "tag", "v4.17", "release-4.17")
	sha := revParse(t, repo, "release-4.17")
	gitrepo.Git(t, repo, "checkout", "-q", "-b", "release-4.23", "release-4.22")
	link := filepath.Join(repo, filepath.FromSlash(recorded.LastRebaseFile))
	_ = os.Remove(link)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	gitrepo.Git(t, repo, "add", "-A")
	gitrepo.Git(t, repo, "commit", "-qm", "a record as a link")
	// A record nested 4 000 subshells deep (within the record's size cap) would take a
	// recursive reader's stack; a million deep would overflow it, which no recover catches:
	// that branch's error, not the death of the whole check.
	gitrepo.Git(t, repo, "checkout", "-q", "-b", "release-4.24", "release-4.22")
	const deep = 4000
	nested := strings.Repeat("( ", deep) + "./scripts/auto-rebase/rebase.sh to a b" + strings.Repeat(" )", deep) + "\n"
	if err := os.WriteFile(link, []byte(nested), 0o644); err != nil {
		t.Fatal(err)
	}
	gitrepo.Git(t, repo, "commit", "-qam", "a record nested a million deep")
	rep, err := Check(t.Context(), Options{Repo: repo, Branches: []string{"v4.17", sha, "release-4.22", "release-4.23", "release-4.24", "nope"}, Source: sourceOptions(t, reg)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"it is a tag", "it names a commit", "", "mode 120000", recorded.LastRebaseFile, "no such branch"} {
		it := rep.Items[i]
		if want == "" {
			if it.Status != Current {
				t.Errorf("%s: %s %q, want current", it.Branch, it.Status, it.Reason)
			}
			continue
		}
		if it.Status != Error || !strings.Contains(it.Reason, want) {
			t.Errorf("%s: %s %q, want an error containing %q", it.Branch, it.Status, it.Reason, want)
		}
	}
}

// TestCheckRefusesATagThatContradictsItsDigest: last_rebase.sh pinning 4.17.20's payload by
// digest under the tag 4.17.24 records nothing a run would take (it refuses the mismatch): the
// branch is an error naming both, not "current at 4.17.24".
func TestCheckRefusesATagThatContradictsItsDigest(t *testing.T) {
	isolate(t)
	reg := testregistry.NewForTest(t, testregistry.Options{})
	cat := catalog(t)
	fx, err := testregistry.FixturesDir()
	if err != nil {
		t.Fatal(err)
	}
	pin := map[string]string{}
	for _, p := range cat.Payloads {
		if p.Minor == "4.17" && !p.Nightly && p.Arch != "multi" {
			pin[p.Arch+" "+p.Version] = p.Ref + "@" + p.Digest
		}
	}
	lying := strings.Replace(pin["x86_64 4.17.20"], "4.17.20-x86_64", "4.17.24-x86_64", 1)
	record := "#!/bin/bash -x\n./scripts/auto-rebase/rebase.sh to \"" + lying + "\" \"" + pin["aarch64 4.17.24"] + "\"\n"
	repo := makeClone(t, []branch{{name: "release-4.17", from: filepath.Join(fx, fixtures.TreesDir, "4.17"),
		write: map[string]string{recorded.LastRebaseFile: record}}})
	rep, err := Check(t.Context(), Options{Repo: repo, Branches: []string{"release-4.17"}, Source: sourceOptions(t, reg)})
	if err != nil {
		t.Fatal(err)
	}
	if it := rep.Items[0]; it.Status != Error || !strings.Contains(it.Reason, "4.17.20") || !strings.Contains(it.Reason, "4.17.24") {
		t.Errorf("payload %+v: %s %q; want an error naming the tag's and the content's versions", it.Payload, it.Status, it.Reason)
	}
}

package gittree

import (
	"context"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// TestBranchNameProblem: what a caller gives as a branch name is one, or the reason it is not:
// blanks, white space, revisions (main~1, HEAD^, @{-1}, ranges) and what git refuses.
func TestBranchNameProblem(t *testing.T) {
	repo := testRepo(t)
	for name, want := range map[string]string{
		"main": "", "release-4.18": "", "jdoe/feature": "", "v4.18": "",
		"": "empty", " ": "empty", " main": "white space", "main\n": "white space",
		"main~1": "not a branch name", "HEAD^": "not a branch name", "@{-1}": "not a branch name", "@": "not a branch name",
		"main..release": "not a branch name", "-x": "not a branch name", "a/../b": "not a branch name", "x.lock": "not a branch name",
		"a:b": "not a branch name", "a b": "not a branch name", "main/": "not a branch name",
	} {
		got := BranchNameProblem(context.Background(), repo, name)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("BranchNameProblem(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestNotLocalSaysWhatANameIs: a name that is no local branch is described as what it is —
// a tag, a remote-tracking branch (with the command that makes it local), a commit, nothing.
func TestNotLocalSaysWhatANameIs(t *testing.T) {
	repo := testRepo(t)
	gitrepo.Git(t, repo, "tag", "v4.18", "main")
	gitrepo.Git(t, repo, "update-ref", "refs/remotes/upstream/release-4.17", "main")
	gitrepo.Git(t, repo, "update-ref", "refs/remotes/origin/release-4.17", "main")
	sha := strings.TrimSpace(gitrepo.Git(t, repo, "rev-parse", "main"))
	refs, err := ReadRefs(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"main":         "",
		"v4.18":        "it is a tag",
		"release-4.17": "only the remote-tracking branch origin/release-4.17 exists: make it local with git branch release-4.17 origin/release-4.17",
		sha:            "it names a commit",
		"nope":         "no such branch",
	} {
		got := refs.NotLocal(context.Background(), repo, name)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("NotLocal(%q) = %q, want %q", name, got, want)
		}
	}
	if got := refs.RemoteTracking(); strings.Join(got, ",") != "origin/release-4.17,upstream/release-4.17" {
		t.Errorf("RemoteTracking = %q", got)
	}
}

// TestFoldJoinsWhatACaseInsensitiveFileSystemJoins: names that differ only in case or in
// Unicode normalisation fold alike; others do not.
func TestFoldJoinsWhatACaseInsensitiveFileSystemJoins(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"Main", "main", true}, {"RELEASE-4.18", "release-4.18", true},
		{"caf\u00e9", "cafe\u0301", true}, {"STRASSE", "stra\u00dfe", true},
		{"a/b", "a_b", false}, {"main", "main2", false},
	} {
		if got := Fold(tc.a) == Fold(tc.b); got != tc.same {
			t.Errorf("Fold(%q) == Fold(%q): %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

package gittree

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// TestTreeReadsRegularFilesOnly: a branch's tree serves its regular files (executable ones
// too) as committed, whatever the work tree holds; a symlink or a submodule is an error naming
// its mode (the rebase never follows links), as is a file over the cap; a path outside the
// tree, a directory or a missing file is not served.
func TestTreeReadsRegularFilesOnly(t *testing.T) {
	repo := testRepo(t)
	tree, err := Open(context.Background(), repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(gitrepo.Git(t, repo, "rev-parse", "main")); tree.Commit != want {
		t.Errorf("Commit = %s, want %s", tree.Commit, want)
	}
	for _, tc := range []struct {
		name, data string
		// err is a substring of the error; errIs a sentinel it wraps ("" and nil: readable).
		err   string
		errIs error
	}{
		{name: "assets/release/release-x86_64.json", data: "{\"release\": {\"base\": \"4.18.1\"}}\n"},
		{name: "scripts/auto-rebase/rebase.sh", data: "#!/bin/bash\n"},
		{name: "name with spaces.yaml", data: "kind: ConfigMap\n"},
		{name: "link.json", err: "main:link.json: not a regular file (a symbolic link, git mode 120000)", errIs: safefile.ErrNotRegular},
		{name: "vendor/sub", err: "main:vendor/sub: not a regular file (a submodule, git mode 160000)", errIs: safefile.ErrNotRegular},
		{name: "big.bin", err: "main:big.bin: 16777217 bytes, over the 16777216-byte cap", errIs: safefile.ErrTooLarge},
		{name: "assets", errIs: fs.ErrNotExist},
		{name: "uncommitted.yaml", errIs: fs.ErrNotExist},
		{name: "../outside", errIs: fs.ErrInvalid},
		{name: "/etc/passwd", errIs: fs.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := fs.ReadFile(tree, tc.name)
			readable := tc.err == "" && tc.errIs == nil
			switch {
			case readable && (err != nil || string(data) != tc.data):
				t.Errorf("ReadFile = %q, %v; want %q", data, err, tc.data)
			case !readable && (err == nil || !strings.Contains(err.Error(), tc.err) || (tc.errIs != nil && !errors.Is(err, tc.errIs))):
				t.Errorf("ReadFile error %v, want one containing %q (is %v)", err, tc.err, tc.errIs)
			}
		})
	}
}

// TestTreeOpenGivesAFile: Open serves a regular file with its size and base name.
func TestTreeOpenGivesAFile(t *testing.T) {
	tree, err := Open(context.Background(), testRepo(t), "main")
	if err != nil {
		t.Fatal(err)
	}
	f, err := tree.Open("scripts/auto-rebase/rebase.sh")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Name() != "rebase.sh" || st.Size() != int64(len("#!/bin/bash\n")) || st.IsDir() || !st.Mode().IsRegular() {
		t.Errorf("Stat = %v (%v), want rebase.sh, a regular file of 12 bytes", st, err)
	}
	if data, err := io.ReadAll(f); err != nil || string(data) != "#!/bin/bash\n" {
		t.Errorf("read %q, %v", data, err)
	}
}

// TestOpenNamesWhatIsNoCommit and TestBranches: a revision that is no commit is an error
// naming it; the local branches are listed sorted, without remote ones.
func TestOpenNamesWhatIsNoCommit(t *testing.T) {
	repo := testRepo(t)
	for _, rev := range []string{"release-9.9", "main:assets"} {
		if _, err := Open(context.Background(), repo, rev); err == nil || !strings.Contains(err.Error(), rev) {
			t.Errorf("Open(%q): %v, want an error naming it", rev, err)
		}
	}
}

func TestBranches(t *testing.T) {
	repo := testRepo(t)
	gitrepo.Git(t, repo, "branch", "release-4.18")
	gitrepo.Git(t, repo, "branch", "jdoe/feature")
	gitrepo.Git(t, repo, "update-ref", "refs/remotes/origin/release-4.17", "main")
	// A tag named as a branch makes refname:short say "heads/main"; the branch is "main".
	gitrepo.Git(t, repo, "tag", "main")
	got, err := Branches(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"jdoe/feature", "main", "release-4.18"}, got); diff != "" {
		t.Errorf("Branches (-want +got):\n%s", diff)
	}
}

// testRepo commits, on branch main, regular and executable files, a symlink, a submodule
// entry and a file one byte over the cap, then leaves an uncommitted file in the work tree.
func testRepo(t *testing.T) string {
	t.Helper()
	gitrepo.Isolate(t)
	repo := t.TempDir()
	gitrepo.Git(t, repo, "init", "-q", "-b", "main")
	gitrepo.WriteFile(t, repo, "assets/release/release-x86_64.json", "{\"release\": {\"base\": \"4.18.1\"}}\n", 0o644)
	gitrepo.WriteFile(t, repo, "scripts/auto-rebase/rebase.sh", "#!/bin/bash\n", 0o755)
	gitrepo.WriteFile(t, repo, "name with spaces.yaml", "kind: ConfigMap\n", 0o644)
	gitrepo.WriteFile(t, repo, "big.bin", strings.Repeat("x", int(MaxFileSize)+1), 0o644)
	if err := os.Symlink("assets/release/release-x86_64.json", filepath.Join(repo, "link.json")); err != nil {
		t.Fatal(err)
	}
	gitrepo.Git(t, repo, "add", "-A")
	gitrepo.Git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor/sub")
	gitrepo.Git(t, repo, "commit", "-qm", "base")
	gitrepo.WriteFile(t, repo, "uncommitted.yaml", "kind: Secret\n", 0o644)
	return repo
}

// TestReadFileMaxIsSafefilePolicy: safefile.ReadFS leaves a clone's reads to the tree,
// which applies the reader's smaller cap with safefile's error.
func TestReadFileMaxIsSafefilePolicy(t *testing.T) {
	tree, err := Open(t.Context(), testRepo(t), "main")
	if err != nil {
		t.Fatal(err)
	}
	_, err = safefile.ReadFS(tree, "scripts/auto-rebase/rebase.sh", 4)
	if !errors.Is(err, safefile.ErrTooLarge) || !strings.Contains(err.Error(), "main:scripts/auto-rebase/rebase.sh: 12 bytes, over the 4-byte cap") {
		t.Errorf("ReadFS with a 4-byte cap: %v", err)
	}
	if data, err := safefile.ReadFS(tree, "scripts/auto-rebase/rebase.sh", 0); err != nil || string(data) != "#!/bin/bash\n" {
		t.Errorf("ReadFS: %q, %v", data, err)
	}
}

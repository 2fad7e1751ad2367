package commit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// crlfWrites is a run that writes CRLF files (a checkout whose work tree has CRLF line ends
// keeps them, keepstyle) next to LF ones, new and changed.
var crlfWrites = edits{write: map[string]string{
	"scripts/auto-rebase/lvms-rebase.lock.yaml": "bundle: v2\r\n",
	"assets/components/lvms/keep.yaml":          "kind: ConfigMap # v2\r\n",
	"assets/components/lvms/new.yaml":           "kind: Deployment\r\nmetadata: {}\r\n",
	"assets/components/lvms/lf.yaml":            "kind: Service\n",
}}

// TestPhasesCommitTheBytesTheRunWrote: whatever the committer's git does to files on their
// way into a commit (core.autocrlf), each commit holds exactly the bytes the run wrote (the
// lock records their hashes: --check on any checkout must agree) and git sees no change left;
// where the repository's own attributes make git see a committed file as modified, the run
// fails naming the file instead of exiting 0.
func TestPhasesCommitTheBytesTheRunWrote(t *testing.T) {
	withIdentity(t)
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr string
	}{
		{name: "plain repository", setup: func(*testing.T, string) {}},
		{name: "core.autocrlf=true", setup: func(t *testing.T, dir string) { gitrepo.Git(t, dir, "config", "core.autocrlf", "true") }},
		{name: "core.autocrlf=input", setup: func(t *testing.T, dir string) { gitrepo.Git(t, dir, "config", "core.autocrlf", "input") }},
		{name: "core.safecrlf=true with autocrlf", setup: func(t *testing.T, dir string) {
			gitrepo.Git(t, dir, "config", "core.autocrlf", "input")
			gitrepo.Git(t, dir, "config", "core.safecrlf", "true")
		}},
		{name: "a clean filter on yaml files", wantErr: "assets/components/lvms/keep.yaml, assets/components/lvms/lf.yaml", setup: func(t *testing.T, dir string) {
			gitrepo.Git(t, dir, "config", "filter.upper.clean", "tr a-z A-Z")
			gitrepo.WriteFile(t, dir, ".git/info/attributes", "*.yaml filter=upper\n", 0o644)
		}},
		{name: "eol=lf attribute on yaml files", wantErr: "git still sees", setup: func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, ".git/info/attributes", "*.yaml text eol=lf\n", 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := newRepo(t, "5.0")
			tc.setup(t, dir)
			crlfWrites.apply(t, dir)
			in := crlfWrites.input(dir, record50)
			_, err := Phases(context.Background(), in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Phases: %v", err)
			}
			for p, data := range in.Files {
				if got := gitrepo.Git(t, dir, "cat-file", "blob", "HEAD:"+p); got != string(data) {
					t.Errorf("HEAD:%s = %q, want the run's bytes %q", p, got, data)
				}
			}
		})
	}
}

// TestPhasesVerifyWhatHooksCommitted: the repository's hooks run, and what they make of a
// commit is checked: a pre-commit hook that reformats a staged file, or stages a file the run
// did not write (a person's work), or fails, ends the run with an error naming the file or the
// hook's message — never exit 0 with commits that differ from the lock.
func TestPhasesVerifyWhatHooksCommitted(t *testing.T) {
	withIdentity(t)
	for _, tc := range []struct {
		name, hook, wantErr string
		// wantMade are the commits reported made.
		wantMade []string
	}{{
		name:    "a formatting hook rewrites a staged file",
		hook:    "git diff --cached --name-only | grep 'lvms/keep.yaml' | while read f; do printf 'kind: ConfigMap  # v2\\n' > \"$f\"; git add \"$f\"; done\n",
		wantErr: "assets/components/lvms/keep.yaml: the commit holds", wantMade: []string{messageLock, messageRec50, messageImgs, messageMans},
	}, {
		// A hook picks its files with a glob pathspec, as lint and format hooks do: the hook
		// must see git's ordinary pathspecs, not the literal ones the committer's own git calls use.
		name:    "a formatting hook picks its files by a glob pathspec",
		hook:    "for f in $(git diff --cached --name-only -- '*/lvms/*.yaml'); do printf 'kind: ConfigMap  # v2\\n' > \"$f\"; git add \"$f\"; done\n",
		wantErr: "assets/components/lvms/keep.yaml: the commit holds", wantMade: []string{messageLock, messageRec50, messageImgs, messageMans},
	}, {
		name: "a hook stages the person's work", hook: "git add NOTES\n",
		wantErr: "also holds NOTES, which the run did not write", wantMade: []string{messageLock},
	}, {
		name: "a hook refuses the commit", hook: "echo 'lint failed' >&2; exit 1\n",
		wantErr: "lint failed",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base := newRepo(t, "5.0")
			gitrepo.WriteFile(t, dir, "NOTES", "work in progress\n", 0o644)
			rebaseWrites.apply(t, dir)
			installHook(t, dir, "pre-commit", tc.hook)
			made, err := Phases(context.Background(), rebaseWrites.input(dir, record50))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if !slices.Equal(made, tc.wantMade) {
				t.Errorf("made %q, want %q", made, tc.wantMade)
			}
			if n := len(commitsSince(t, dir, base)); n != len(tc.wantMade) {
				t.Errorf("%d commits in history, %d reported", n, len(tc.wantMade))
			}
		})
	}
}

// TestPhasesLeaveThePersonsWork: the person's staged work (in the index) stays staged and out
// of every commit, their unstaged edits stay in the work tree, and the repository's index is
// left holding HEAD for the committed paths.
func TestPhasesLeaveThePersonsWork(t *testing.T) {
	withIdentity(t)
	dir, base := newRepo(t, "5.0")
	gitrepo.WriteFile(t, dir, "NOTES", "work in progress\n", 0o644)
	gitrepo.Git(t, dir, "add", "NOTES")
	gitrepo.WriteFile(t, dir, "assets/components/ovn/namespace.yaml", "# edited\n", 0o644)
	gitrepo.Git(t, dir, "add", "assets/components/ovn/namespace.yaml")
	gitrepo.WriteFile(t, dir, "assets/components/ovn/namespace.yaml", "# edited twice\n", 0o644)
	rebaseWrites.apply(t, dir)
	if _, err := Phases(context.Background(), rebaseWrites.input(dir, record50)); err != nil {
		t.Fatal(err)
	}
	for _, c := range commitsSince(t, dir, base) {
		for _, f := range c.Files {
			if strings.Contains(f, "NOTES") || strings.Contains(f, "ovn") || strings.Contains(f, "last_rebase.sh") {
				t.Errorf("commit %q took the person's %s", c.Message, f)
			}
		}
	}
	want := []string{"A  NOTES", "MM assets/components/ovn/namespace.yaml", " M scripts/auto-rebase/last_rebase.sh"}
	if got := status(t, dir); !slices.Equal(got, want) {
		t.Errorf("status %q, want %q", got, want)
	}
}

// TestCheckRefusesUncommittedFilesARunWouldCommit: before a --commit run writes anything, a
// file it writes and commits that differs from HEAD (edited, staged, untracked in a component
// directory, deleted) is refused by name; files it never commits are not its business.
func TestCheckRefusesUncommittedFilesARunWouldCommit(t *testing.T) {
	withIdentity(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  []string
	}{
		{"clean", func(*testing.T, string) {}, nil},
		{"edits outside what a run commits", func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, "NOTES", "x\n", 0o644)
			gitrepo.WriteFile(t, dir, "scripts/auto-rebase/last_rebase.sh", "# edit\n", 0o644)
		}, nil},
		{"an edited component file", func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, "assets/components/lvms/keep.yaml", "kind: ConfigMap # edit\n", 0o644)
		}, []string{"assets/components/lvms/keep.yaml"}},
		{"a staged release JSON and an edited recipe", func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, "assets/release/release-x86_64.json", "{}\n", 0o644)
			gitrepo.Git(t, dir, "add", "assets/release/release-x86_64.json")
			gitrepo.WriteFile(t, dir, "scripts/auto-rebase/assets.yaml", "# edit\n", 0o644)
		}, []string{"assets/release/release-x86_64.json", "scripts/auto-rebase/assets.yaml"}},
		{"an untracked file in a component directory and a deleted lock", func(t *testing.T, dir string) {
			gitrepo.WriteFile(t, dir, "assets/components/csi-snapshot-controller/new.yaml", "x\n", 0o644)
			gitrepo.Git(t, dir, "rm", "-q", "--cached", "scripts/auto-rebase/lvms-rebase.lock.yaml")
		}, []string{"assets/components/csi-snapshot-controller/new.yaml", "scripts/auto-rebase/lvms-rebase.lock.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := newRepo(t, "5.0")
			tc.setup(t, dir)
			err := Check(context.Background(), dir)
			var de *DirtyError
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Check: %v", err)
			case tc.want != nil && (!errors.As(err, &de) || !slices.Equal(de.Paths, tc.want)):
				t.Fatalf("Check: %v, want a DirtyError naming %q", err, tc.want)
			}
		})
	}
}

// TestPhasesInASubdirectory: a MicroShift tree kept in a subdirectory of a repository is
// committed at its place, and verified there.
func TestPhasesInASubdirectory(t *testing.T) {
	withIdentity(t)
	top := t.TempDir()
	sub := filepath.Join(top, "microshift")
	if err := os.CopyFS(sub, os.DirFS(filepath.Join(treesDir, "5.0"))); err != nil {
		t.Fatal(err)
	}
	for p, data := range baseFiles {
		gitrepo.WriteFile(t, sub, p, data, 0o644)
	}
	gitrepo.Git(t, top, "init", "-q")
	gitrepo.Git(t, top, "add", "-A")
	gitrepo.Git(t, top, "commit", "-qm", "base")
	rebaseWrites.apply(t, sub)
	made, err := Phases(context.Background(), rebaseWrites.input(sub, record50))
	if err != nil || len(made) != 4 {
		t.Fatalf("Phases: %q, %v", made, err)
	}
	if got := gitrepo.Git(t, top, "cat-file", "blob", "HEAD:microshift/assets/components/lvms/new.yaml"); got != rebaseWrites.write["assets/components/lvms/new.yaml"] {
		t.Errorf("new.yaml committed as %q", got)
	}
	if err := Check(context.Background(), sub); err != nil {
		t.Errorf("Check after the commits: %v", err)
	}
}

package attack

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommit attacks --commit (principle 1 and 3 for git): hooks that fail, reformat or hang,
// git configuration that rewrites bytes, a person's uncommitted work, no identity, and the
// re-run after a swap whose commits did not finish.
func TestCommit(t *testing.T) {
	skipShort(t)
	commit := func(w *world) []string { return w.rebase("--commit") }
	rows := []row{
		{name: "plain/fresh tree", class: plain, args: commit, want: exitOK},
		{name: "absent/no git identity", class: absent, env: []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"},
			args: commit, want: exitError, names: []string{"identity"}},
		{name: "colliding/a failing pre-commit hook, then again", class: colliding,
			setup: func(t *testing.T, w *world) { hook(t, w, "pre-commit", "echo lint failed >&2; exit 1") },
			args:  commit, want: exitError, names: []string{"lint failed"}, swapMayComplete: true, repair: true},
		// The swap finished, the commits did not: a re-run without --commit must not say "no
		// changes" and stop there — it names the files that differ from HEAD, in its warning
		// and in the PR body.
		{name: "colliding/a failing pre-commit hook, then a write with --pr-body", class: colliding,
			setup: func(t *testing.T, w *world) { hook(t, w, "pre-commit", "echo lint failed >&2; exit 1") },
			args:  commit, want: exitError, names: []string{"lint failed"}, swapMayComplete: true,
			after: rerunReportsUncommitted},
		{name: "colliding/a formatting pre-commit hook", class: colliding,
			setup: func(t *testing.T, w *world) {
				hook(t, w, "pre-commit", "for f in $(git diff --cached --name-only -- '*.yaml'); do printf '# formatted\\n' >> \"$f\"; git add \"$f\"; done")
			},
			args: commit, want: exitError, names: []string{"hook"}, swapMayComplete: true},
		{name: "colliding/a pre-commit hook staging a file of its own", class: colliding,
			setup: func(t *testing.T, w *world) {
				hook(t, w, "pre-commit", "git update-index --add --cacheinfo 100644,$(echo stamp | git hash-object -w --stdin),STAMP")
			},
			args: commit, want: exitError, names: []string{"STAMP"}, swapMayComplete: true},
		// A post-commit hook amending the first commit: its message is the hook's business (the
		// commit still holds the run's bytes, exit 0), a file amended into it is not.
		{name: "colliding/a post-commit hook amending the message", class: colliding,
			setup: func(t *testing.T, w *world) { amendOnce(t, w, "") }, args: commit, want: exitOK},
		{name: "colliding/a post-commit hook amending a file into the commit", class: colliding,
			setup: func(t *testing.T, w *world) {
				amendOnce(t, w, "git update-index --add --cacheinfo 100644,$(echo stamp | git hash-object -w --stdin),STAMP; ")
			},
			args: commit, want: exitError, names: []string{"STAMP"}, swapMayComplete: true},
		// exit 0 must mean HEAD holds the lock's bytes (invariant 1 reads HEAD's blobs), whatever
		// git's configuration or attributes would make of them.
		{name: "colliding/core.autocrlf=true", class: colliding,
			setup: func(t *testing.T, w *world) { gitT(t, w.tree, "config", "core.autocrlf", "true") },
			args:  commit, want: exitOK},
		{name: "colliding/core.autocrlf=true on a rebased tree, --commit again", class: colliding, tpl: tplRebased,
			setup: func(t *testing.T, w *world) { gitT(t, w.tree, "config", "core.autocrlf", "true") },
			args:  commit, want: exitOK},
		{name: "colliding/core.autocrlf=input and core.safecrlf=true", class: colliding,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "config", "core.autocrlf", "input")
				gitT(t, w.tree, "config", "core.safecrlf", "true")
			},
			args: commit, want: exitOK},
		{name: "colliding/.gitattributes eol=crlf for yaml", class: colliding,
			setup: func(t *testing.T, w *world) { attributes(t, w, "*.yaml text eol=crlf\n") },
			args:  commit, want: exitOK},
		{name: "colliding/a clean filter on yaml", class: colliding,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "config", "filter.strip.clean", "cat; echo '# cleaned'")
				gitT(t, w.tree, "config", "filter.strip.smudge", "cat")
				attributes(t, w, "*.yaml filter=strip\n")
			},
			args: commit, want: exitError, names: []string{".yaml"}, swapMayComplete: true},
		{name: "colliding/a person's uncommitted edit of a recipe", class: colliding,
			setup: func(t *testing.T, w *world) { appendTo(t, w, recipeLVMS, "# mine\n") },
			args:  commit, want: exitError, names: []string{recipeLVMS}},
		{name: "colliding/a person's untracked file in a managed directory", class: colliding,
			setup: func(t *testing.T, w *world) {
				put(t, w.tree, "assets/components/lvms/mine.yaml", "kind: ConfigMap\n", 0o644)
			},
			args: commit, want: exitError, names: []string{"assets/components/lvms/mine.yaml"}},
		{name: "colliding/a person's staged file elsewhere", class: colliding,
			setup: func(t *testing.T, w *world) {
				put(t, w.tree, "NOTES", "work in progress\n", 0o644)
				gitT(t, w.tree, "add", "NOTES")
			},
			args: commit, want: exitOK, after: func(t *testing.T, w *world, _ result) {
				if staged := gitRun(t, w.tree, "diff", "--cached", "--name-only"); staged != "NOTES\n" {
					t.Errorf("invariant 3: the person's staged NOTES is no longer (only) staged: %q", staged)
				}
			}},
	}
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		rows = append(rows, row{name: "killed/" + s.sig.String() + " while a pre-commit hook runs, then again", class: killed,
			setup: func(t *testing.T, w *world) { hook(t, w, "pre-commit", "touch '"+w.marker()+"'; sleep 30") },
			args:  commit, when: &trigger{marker: true, delay: 200 * time.Millisecond, sig: s.sig},
			want: s.code, swapMayComplete: true, repair: true})
	}
	for i := range rows {
		rows[i].mode = modeCommit
		if rows[i].tpl == "" {
			rows[i].tpl = tplFresh
		}
	}
	runRows(t, rows)
}

// amendOnce installs a post-commit hook that runs stage (shell) and amends the first commit
// the run makes, once (its marker is outside the world).
func amendOnce(t *testing.T, w *world, stage string) {
	t.Helper()
	hook(t, w, "post-commit", "[ -e '"+w.marker()+"' ] || { touch '"+w.marker()+"'; "+stage+"git commit -q --amend -m amended; }")
	t.Cleanup(func() { _ = os.Remove(w.marker()) })
}

// attributes commits a .gitattributes file to the tree (a file of the person's, outside the
// managed paths).
func attributes(t *testing.T, w *world, text string) {
	t.Helper()
	put(t, w.tree, ".gitattributes", text, 0o644)
	gitT(t, w.tree, "add", ".gitattributes")
	gitT(t, w.tree, "commit", "-qm", "attributes")
}

// rerunReportsUncommitted: after a run whose swap finished and whose commits did not, the
// same write without --commit exits 0 (the tree is what the inputs render) yet says which
// files differ from HEAD — on stderr and in the PR body — never just "no changes"; HEAD stays.
func rerunReportsUncommitted(t *testing.T, w *world, _ result) {
	t.Helper()
	head := gitRun(t, w.tree, "rev-parse", "HEAD")
	body := filepath.Join(w.out, "pr.md")
	res := runProc(proc{args: w.rebase("--pr-body", body), env: childEnv(w.home, "TMPDIR="+w.tmp), dir: w.root})
	t.Logf("re-run without --commit: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, clip(res.stderr))
	if res.code != exitOK {
		t.Fatalf("invariant 1: the re-run exits %d, want 0", res.code)
	}
	if !strings.Contains(res.stderr, "not committed") { // its warning names a few and counts the rest
		t.Error("invariant 1: the re-run does not say that files are not committed")
	}
	if b := read(t, body); !strings.Contains(b, "not committed") || !strings.Contains(b, "lvms-rebase.lock.yaml") {
		t.Errorf("invariant 1: the PR body does not say the files are not committed:\n%s", b)
	}
	if now := gitRun(t, w.tree, "rev-parse", "HEAD"); now != head {
		t.Error("invariant 3: a run without --commit moved HEAD")
	}
}

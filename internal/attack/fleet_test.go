package attack

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// gitT is gitSetup for a row's setup: a failure fails the row.
func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	if err := gitSetup(dir, args...); err != nil {
		t.Fatal(err)
	}
}

// fleet is a --branches run on the row's clone with PR bodies in out/bodies.
func fleet(w *world, branches string, extra ...string) []string {
	return w.rebase(append([]string{"--branches", branches, "--commit", "--pr-body-dir", filepath.Join(w.out, "bodies")}, extra...)...)
}

// commitOn commits a change to rel on branch b of the clone (checked out and back).
func commitOn(t *testing.T, w *world, b, rel, data string, setup func()) {
	t.Helper()
	gitT(t, w.tree, "checkout", "-q", b)
	put(t, w.tree, rel, data, 0o755)
	if setup != nil {
		setup()
	}
	gitT(t, w.tree, "add", "-A")
	gitT(t, w.tree, "commit", "-qm", "edit "+rel)
	gitT(t, w.tree, "checkout", "-q", "main")
}

// TestFleet attacks --branches: the names given (colliding, duplicated, revisions, absent),
// one hostile branch among good ones, a reviewer's commit on a result branch, signals and a
// kill with the stale worktree it leaves.
func TestFleet(t *testing.T) {
	skipShort(t)
	branch := func(names ...string) func(t *testing.T, w *world) {
		return func(t *testing.T, w *world) {
			for _, n := range names {
				gitT(t, w.tree, "branch", n, "main")
			}
		}
	}
	rows := []row{
		{name: "plain/two branches", class: plain, args: func(w *world) []string { return fleet(w, "main,release-4.22") }, want: exitOK},
		{name: "colliding/a/b and a_b", class: colliding, setup: branch("a/b", "a_b"),
			args: func(w *world) []string { return fleet(w, "a/b,a_b") }, want: exitUsage, names: []string{"a/b", "a_b"}},
		{name: "colliding/Main and main", class: colliding, setup: branch("Main"),
			args: func(w *world) []string { return fleet(w, "Main,main") }, want: exitUsage, names: []string{"Main", "main"}},
		{name: "duplicated/main twice", class: duplicated, args: func(w *world) []string { return fleet(w, "main,main") }, want: exitUsage, names: []string{"main"}},
		{name: "absent/a revision, not a branch", class: absent, args: func(w *world) []string { return fleet(w, "main~1") }, want: exitUsage, names: []string{"main~1"}},
		{name: "absent/no such branch among good ones", class: absent, args: func(w *world) []string { return fleet(w, "nosuch,release-4.22") },
			want: exitError, names: []string{"nosuch"}, after: othersDone("release-4.22")},
		{name: "colliding/a branch named lvms-rebase", class: colliding, setup: branch("lvms-rebase"),
			args: func(w *world) []string { return fleet(w, "main") }, want: exitError, names: []string{"main"}, after: says("a branch named lvms-rebase")},
		{name: "absent/no git identity", class: absent, env: []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"},
			args: func(w *world) []string { return fleet(w, "main") }, want: exitError, names: []string{"identity"}},
		{name: "special/a record linked to /dev/zero in one branch", class: special,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "checkout", "-q", "release-4.22")
				link(t, w.tree, lastRebase, "/dev/zero")
				gitT(t, w.tree, "commit", "-qam", "record linked")
				gitT(t, w.tree, "checkout", "-q", "main")
			},
			args: func(w *world) []string { return fleet(w, "release-4.22,main") }, want: exitError, names: []string{"release-4.22"}, after: othersDone("main")},
		{name: "colliding/a reviewer's commit on lvms-rebase/main", class: colliding,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "checkout", "-q", "-b", "lvms-rebase/main", "main")
				put(t, w.tree, "REVIEW", "fix-up\n", 0o644)
				gitT(t, w.tree, "add", "REVIEW")
				gitT(t, w.tree, "commit", "-qm", "reviewer's fix-up")
				gitT(t, w.tree, "checkout", "-q", "main")
			},
			args: func(w *world) []string { return fleet(w, "main") }, want: exitError, names: []string{"main"}, after: says("reviewer's fix-up")},
		{name: "colliding/a reviewer's commit on lvms-rebase/main among a good branch", class: colliding,
			setup: func(t *testing.T, w *world) {
				commitOn(t, w, "main", "REVIEW", "fix-up\n", nil)
				gitT(t, w.tree, "branch", "-f", "lvms-rebase/main", "main")
				gitT(t, w.tree, "reset", "-q", "--hard", "HEAD~1")
			},
			args: func(w *world) []string { return fleet(w, "main,release-4.22") }, want: exitError, names: []string{"main"},
			after: othersDone("release-4.22")},
		{name: "colliding/lvms-rebase/main checked out", class: colliding,
			setup: func(t *testing.T, w *world) { gitT(t, w.tree, "checkout", "-q", "-b", "lvms-rebase/main", "main") },
			args:  func(w *world) []string { return fleet(w, "main") }, want: exitError, names: []string{"main"}, after: says("checked out")},
		// Without --pr-body-dir no file is derived from the names: a/b and a_b are two branches.
		{name: "colliding/a/b and a_b without PR bodies", class: colliding, setup: branch("a/b", "a_b"),
			args: func(w *world) []string { return w.rebase("--branches", "a/b,a_b", "--commit") }, want: exitOK},
	}
	// An unset or blank CI variable in --branches "$BRANCHES", with --commit: a usage error
	// before any work, never a plain run committing onto the checked-out branch.
	for _, v := range []struct{ name, value string }{{"empty", ""}, {"blank", " "}, {"a tab", "\t"}, {"commas", ",,"}, {"a trailing comma", "main,"}} {
		rows = append(rows, row{name: "empty/--branches " + v.name + " with --commit", class: empty,
			args: func(w *world) []string { return fleet(w, v.value) }, want: exitUsage, names: []string{"--branches"}})
	}
	rows = append(rows, row{name: "empty/--branches main --branches \"\" with --commit", class: empty,
		args: func(w *world) []string { return append(fleet(w, "main"), "--branches", "") }, want: exitUsage, names: []string{"--branches"}})
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		rows = append(rows, row{name: "killed/" + s.sig.String() + " in a branch's swap", class: killed, env: []string{"LVMS_REBASE_PAUSE_AT=stage "},
			args: func(w *world) []string { return fleet(w, "main") }, when: &trigger{at: "failpoint: paused at stage ", sig: s.sig}, want: s.code})
	}
	rows = append(rows, row{name: "killed/SIGKILL in a branch's swap, then again", class: killed, env: []string{"LVMS_REBASE_PAUSE_AT=stage "},
		args: func(w *world) []string { return fleet(w, "main") }, when: &trigger{at: "failpoint: paused at stage ", sig: syscall.SIGKILL},
		want: 128 + int(syscall.SIGKILL), repair: true})
	for i := range rows {
		rows[i].mode, rows[i].tpl = modeFleet, tplClone
	}
	runRows(t, rows)
}

// says: the run's output (the branch lines on stdout, the log on stderr) says each text.
func says(texts ...string) func(t *testing.T, w *world, res result) {
	return func(t *testing.T, _ *world, res result) {
		t.Helper()
		for _, s := range texts {
			if !strings.Contains(res.stdout+res.stderr, s) {
				t.Errorf("the run does not say %q", s)
			}
		}
	}
}

// othersDone: a --branches run that failed for one branch still finished the others.
func othersDone(branches ...string) func(t *testing.T, w *world, res result) {
	return func(t *testing.T, w *world, res result) {
		t.Helper()
		branchesDone(t, w, []string{"--branches", strings.Join(branches, ",")})
	}
}

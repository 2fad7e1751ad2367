package attack

import (
	"path/filepath"
	"strings"
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
	rows := []row{
		{name: "plain/two branches", class: plain, args: func(w *world) []string { return fleet(w, "main,release-4.22") }, want: exitOK},
		{name: "absent/no such branch among good ones", class: absent, args: func(w *world) []string { return fleet(w, "nosuch,release-4.22") },
			want: exitError, names: []string{"nosuch"}, after: othersDone("release-4.22")},
		{name: "special/a record linked to /dev/zero in one branch", class: special,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "checkout", "-q", "release-4.22")
				link(t, w.tree, lastRebase, "/dev/zero")
				gitT(t, w.tree, "commit", "-qam", "record linked")
				gitT(t, w.tree, "checkout", "-q", "main")
			},
			args: func(w *world) []string { return fleet(w, "release-4.22,main") }, want: exitError, names: []string{"release-4.22"}, after: othersDone("main")},
	}
	for i := range rows {
		rows[i].mode, rows[i].tpl = modeFleet, tplClone
	}
	runRows(t, rows)
}

// othersDone: a --branches run that failed for one branch still finished the others.
func othersDone(branches ...string) func(t *testing.T, w *world, res result) {
	return func(t *testing.T, w *world, res result) {
		t.Helper()
		branchesDone(t, w, []string{"--branches", strings.Join(branches, ",")})
	}
}

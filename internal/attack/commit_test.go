package attack

import (
	"testing"
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
		{name: "colliding/core.autocrlf=true", class: colliding,
			setup: func(t *testing.T, w *world) { gitT(t, w.tree, "config", "core.autocrlf", "true") },
			args:  commit, want: exitOK},
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
	for i := range rows {
		rows[i].mode, rows[i].tpl = modeCommit, tplFresh
	}
	runRows(t, rows)
}

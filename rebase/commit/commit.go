// Package commit makes the git commits of a rebase run with --commit (option.Commit): one per
// phase (lock, bundle record, images, manifests with the recipes), with the messages MicroShift's
// own scripts use, so that history reads the same; and checks beforehand that git can commit.
package commit

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
)

// commitPhases are the commits --commit makes, in order, with the legacy scripts' messages
// so that history reads the same (domain.md §6.5); a phase with nothing staged is skipped.
var commitPhases = []struct {
	message string
	paths   func(root string, managed, records []string) []string
}{
	{"update lvms-rebase.lock.yaml", func(string, []string, []string) []string { return []string{lock.Path} }},
	// The branch's own record: last_rebase_lvms.sh, or last_lvms_rebase.sh up to 4.17; the
	// message names it as that branch's script does (recordMessage).
	{"", func(_ string, _, records []string) []string { return records }},
	{"update LVMS images", func(string, []string, []string) []string { return []string{releasefile.RepoDir} }},
	// The recipes ride with the manifests: they list exactly the files of that commit, so
	// presubmit.py passes on every commit of the series.
	{"update LVMS manifests", func(root string, managed, _ []string) []string {
		return append(append([]string{}, managed...), recipe.Existing(root, recipe.RecipeFiles)...)
	}},
}

// Phases stages what the rebase wrote (legacy defect 1: the images commit was never
// made because the wrong path was staged) and commits each phase separately.
// An interruption (ctx done) stops it before the next commit.
func Phases(ctx context.Context, root string, managed, records []string) ([]string, error) {
	var made []string
	for _, ph := range commitPhases {
		msg := ph.message
		if msg == "" {
			msg = recordMessage(records)
		}
		if ctx.Err() != nil {
			return made, fmt.Errorf("stopped before the commit %q (made: %d)", msg, len(made))
		}
		paths := ph.paths(root, managed, records)
		args := append([]string{"add", "-A", "--"}, paths...)
		if _, err := git(root, args...); err != nil {
			return made, err
		}
		staged, err := git(root, append([]string{"diff", "--cached", "--name-only", "--"}, paths...)...)
		if err != nil {
			return made, err
		}
		if strings.TrimSpace(staged) == "" {
			continue
		}
		if _, err := git(root, append([]string{"commit", "-q", "-m", msg, "--"}, paths...)...); err != nil {
			return made, err
		}
		made = append(made, msg)
	}
	return made, nil
}

// recordMessage is the record commit's message: "update last_rebase_lvms.sh" (4.18 on) or
// "update last_lvms_rebase.sh" (up to 4.17), as each branch's rebase script writes it.
func recordMessage(records []string) string {
	names := make([]string, len(records))
	for i, p := range records {
		names[i] = path.Base(p)
	}
	return "update " + strings.Join(names, ", ")
}

// Check tells whether Phases can commit: root is inside a git work tree and git knows
// who the author and committer are.
func Check(root string) error {
	if out, err := git(root, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
		return fmt.Errorf("%s: %s is not inside a git work tree", option.Commit, root)
	}
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := git(root, "var", v); err != nil {
			return fmt.Errorf("%s: git has no identity to commit with (set user.name and user.email): %w", option.Commit, err)
		}
	}
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

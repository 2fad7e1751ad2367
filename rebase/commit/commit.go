// Package commit makes the git commits of a rebase run with --commit (option.Commit): one per
// phase (lock, bundle record, images, manifests with the recipes), with the messages MicroShift's
// own scripts use, so that history reads the same; and checks beforehand that git can commit
// and that nothing a commit would take holds work of somebody else.
//
// A commit holds exactly the bytes the run wrote (the ones the lock records), whatever the
// repository's filters say (core.autocrlf, .gitattributes eol): each is staged by its blob,
// hashed without filters, into an index of its own built from HEAD, so neither the person's
// staged work nor their edits of other files can ride along. The repository's hooks run, as
// for any commit of the maintainers; what got committed is then verified against what the run
// wrote (a formatting pre-commit hook, a hook that stages more files) and any difference is an
// error naming the file.
package commit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
)

// Input is what a run wrote into the work tree at Root.
type Input struct {
	Root string
	// Managed are the component directories the run manages; Records its bundle records.
	Managed, Records []string
	// Files are the paths the run wrote with their bytes (unchanged ones may be included);
	// Removed the paths it removed.
	Files   map[string][]byte
	Removed []string
}

// phase is one commit: its message and the paths (files or directories) it takes.
type phase struct {
	message string
	paths   []string
}

// phases are the commits --commit makes, in order, with the legacy scripts' messages
// so that history reads the same (domain.md §6.5); a phase with nothing to commit is skipped.
func (in Input) phases() []phase {
	var recipes []string
	for _, n := range recipe.RecipeFiles {
		recipes = append(recipes, path.Join(recipe.Dir, n))
	}
	return []phase{
		{"update lvms-rebase.lock.yaml", []string{lock.Path}},
		// The branch's own record: last_rebase_lvms.sh, or last_lvms_rebase.sh up to 4.17; the
		// message names it as that branch's script does (recordMessage).
		{recordMessage(in.Records), in.Records},
		{"update LVMS images", []string{releasefile.RepoDir}},
		// The recipes ride with the manifests: they list exactly the files of that commit, so
		// presubmit.py passes on every commit of the series.
		{"update LVMS manifests", append(slices.Clone(in.Managed), recipes...)},
	}
}

// Phases commits what the run wrote, one commit per phase (legacy defect 1: the images commit
// was never made because the wrong path was staged). An interruption (ctx done) stops it
// before the next commit. It returns the messages of the commits made.
func Phases(ctx context.Context, in Input) ([]string, error) {
	return commitAll(ctx, in, in.phases())
}

// One commits everything the run wrote as a single commit with message.
func One(ctx context.Context, in Input, message string) ([]string, error) {
	var all []string
	for _, ph := range in.phases() {
		all = append(all, ph.paths...)
	}
	return commitAll(ctx, in, []phase{{message, all}})
}

func commitAll(ctx context.Context, in Input, phases []phase) ([]string, error) {
	if left := uncovered(in, phases); len(left) > 0 {
		return nil, fmt.Errorf("%s: no commit takes %s", option.Commit, strings.Join(left, ", "))
	}
	c, err := newCommitter(ctx, in.Root)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var made []string
	for _, ph := range phases {
		if ctx.Err() != nil {
			return made, fmt.Errorf("stopped before the commit %q (made: %d): %w", ph.message, len(made), context.Cause(ctx))
		}
		ok, err := c.commit(ctx, in, ph)
		if ok {
			made = append(made, ph.message)
		}
		if err != nil {
			return made, fmt.Errorf("%s: commit %q (commits made: %d): %w", option.Commit, ph.message, len(made), err)
		}
	}
	// The postcondition, as git itself sees it: nothing the run wrote differs from HEAD (a
	// repository attribute that converts a file on commit would make git see it modified).
	var all []string
	for _, ph := range phases {
		all = append(all, ph.paths...)
	}
	if dirty, err := Uncommitted(ctx, in.Root, all); err != nil || len(dirty) > 0 {
		if err == nil {
			err = fmt.Errorf("git still sees %s as modified after the commits (a filter or an attribute of the repository converts it on commit?)", strings.Join(dirty, ", "))
		}
		return made, fmt.Errorf("%s: %w", option.Commit, err)
	}
	return made, nil
}

// uncovered lists the written or removed paths no phase takes.
func uncovered(in Input, phases []phase) []string {
	var left []string
	for _, p := range append(slices.Sorted(maps.Keys(in.Files)), in.Removed...) {
		if !slices.ContainsFunc(phases, func(ph phase) bool { return under(p, ph.paths) }) {
			left = append(left, p)
		}
	}
	return left
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

// Paths are every path a run may write and commit, whatever the era: the lock, the bundle
// records of every era, the release JSONs, the component directories and the recipes.
func Paths() []string {
	out := []string{lock.Path, releasefile.RepoDir}
	for _, n := range era.RecordNames() {
		out = append(out, path.Join(recipe.Dir, n))
	}
	for _, c := range recipe.Components {
		out = append(out, path.Join("assets", c.Dir))
	}
	for _, n := range recipe.RecipeFiles {
		out = append(out, path.Join(recipe.Dir, n))
	}
	return out
}

// Check tells, before a run writes anything, whether Phases can commit its result: root is
// inside a git work tree, git knows who the author and committer are, and none of Paths()
// differs from HEAD (a commit would take that change with the run's: a person's edit, or an
// earlier run whose commits were not made).
func Check(ctx context.Context, root string) error {
	if out, err := git.Line(ctx, root, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return fmt.Errorf("%s: %s is not inside a git work tree", option.Commit, root)
	}
	if err := CheckIdentity(ctx, root); err != nil {
		return err
	}
	dirty, err := Uncommitted(ctx, root, Paths())
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		return &DirtyError{Root: root, Paths: dirty}
	}
	return nil
}

// CheckIdentity tells whether git in dir knows who the author and committer are.
func CheckIdentity(ctx context.Context, dir string) error {
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := git.Run(ctx, dir, "var", v); err != nil {
			return fmt.Errorf("%s: git has no identity to commit with (set user.name and user.email): %w", option.Commit, err)
		}
	}
	return nil
}

// DirtyError is Check's answer when files a commit would take differ from HEAD.
type DirtyError struct {
	Root  string
	Paths []string
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("%s: %s: %d file(s) lvms-rebase writes differ from HEAD and are not committed: %s — a person's edit, "+
		"or the write of an earlier run whose commits were not made; a commit of this run would take them along. "+
		"Commit them, or set them aside (git stash push --include-untracked -- <paths>), then run again",
		option.Commit, e.Root, len(e.Paths), strings.Join(e.Paths, ", "))
}

// Uncommitted lists the files under paths (relative to root) that differ from HEAD in the
// index or the work tree, untracked ones included (git status), sorted.
func Uncommitted(ctx context.Context, root string, paths []string) ([]string, error) {
	prefix, err := git.Line(ctx, root, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	out, err := git.Cmd{Dir: root, Env: []string{"GIT_LITERAL_PATHSPECS=1"},
		Args: append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--"}, paths...)}.Output(ctx)
	if err != nil {
		return nil, err
	}
	var dirty []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) > 3 {
			// Porcelain paths are from the top of the repository.
			dirty = append(dirty, strings.TrimPrefix(rec[3:], prefix))
		}
	}
	slices.Sort(dirty)
	return slices.Compact(dirty), nil
}

// under reports whether p is one of paths or inside one of them.
func under(p string, paths []string) bool {
	for _, d := range paths {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// errNotRegular is wrapped when a path the run wrote is no longer a regular file.
var errNotRegular = errors.New("not a regular file")

// fileMode is the git mode of the work tree file at p: executable or not.
func fileMode(root, p string) (string, error) {
	st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w (%s)", p, errNotRegular, st.Mode().Type())
	}
	if st.Mode().Perm()&0o100 != 0 {
		return "100755", nil
	}
	return "100644", nil
}

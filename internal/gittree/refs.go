package gittree

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
)

// Refs are a repository's references by full name (refs/heads/main), each with the commit it
// names (an annotated tag's peeled commit).
type Refs map[string]string

// ReadRefs reads every reference of repo.
func ReadRefs(ctx context.Context, repo string) (Refs, error) {
	out, err := git.Run(ctx, repo, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	r := Refs{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch len(f) {
		case 2:
			r[f[1]] = f[0]
		case 3: // an annotated tag: the commit it peels to
			r[f[2]] = f[1]
		}
	}
	return r, sc.Err()
}

// Branch is the commit of the local branch name, if there is one.
func (r Refs) Branch(name string) (string, bool) {
	id, ok := r["refs/heads/"+name]
	return id, ok
}

// BranchNameProblem says why name, as given by a caller, is no branch name at all, or "": a
// blank, white space around it, a revision (main~1, HEAD^, @{-1}, a range) or anything git
// refuses as a branch's name.
func BranchNameProblem(ctx context.Context, repo, name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Sprintf("%q: an empty branch name", name)
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("%q: white space around a branch name", name)
	case strings.HasPrefix(name, "-") || strings.Contains(name, "@{") || name == "@":
		return fmt.Sprintf("%q: not a branch name", name)
	}
	if _, err := git.Run(ctx, repo, "check-ref-format", "refs/heads/"+name); err != nil {
		if ctx.Err() != nil {
			return err.Error()
		}
		return fmt.Sprintf("%q: not a branch name (a revision such as main~1 or HEAD^ names a commit, not a branch)", name)
	}
	return ""
}

// NotLocal says why name is not a local branch of repo — a tag, a remote-tracking branch not
// fetched as a local one, a commit, nothing — or "" when it is one.
func (r Refs) NotLocal(ctx context.Context, repo, name string) string {
	if _, ok := r.Branch(name); ok {
		return ""
	}
	what := "no such branch"
	if _, ok := r["refs/tags/"+name]; ok {
		what = "it is a tag"
	} else if remote := r.remoteTracking(name); remote != "" {
		what = fmt.Sprintf("only the remote-tracking branch %s exists: make it local with git branch %s %s", remote, name, remote)
	} else if _, err := git.Run(ctx, repo, "rev-parse", "-q", "--verify", name+"^{commit}"); err == nil {
		what = "it names a commit, not a branch"
	}
	return fmt.Sprintf("%s: not a local branch of %s (%s)", name, repo, what)
}

// remoteTracking is the first (sorted) remote-tracking branch <remote>/name, or "".
func (r Refs) remoteTracking(name string) string {
	for _, rest := range r.RemoteTracking() {
		if strings.HasSuffix(rest, "/"+name) {
			return rest
		}
	}
	return ""
}

// RemoteTracking lists the remote-tracking branches (origin/main), sorted.
func (r Refs) RemoteTracking() []string {
	var out []string
	for ref := range r {
		if rest, ok := strings.CutPrefix(ref, "refs/remotes/"); ok && !strings.HasSuffix(rest, "/HEAD") {
			out = append(out, rest)
		}
	}
	slices.Sort(out)
	return out
}

// Fold is the form two names share when a case-insensitive, normalising file system (macOS)
// takes them for one: names derived from branches (files, refs) must differ in it.
func Fold(s string) string { return cases.Fold().String(norm.NFC.String(s)) }

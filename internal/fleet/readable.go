package fleet

import (
	"context"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/gittree"
	"github.com/lvms-rebase/lvms-rebase/rebase/commit"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
)

// checkReadable refuses, as the branch's own error before its worktree is made, a branch whose
// tree holds something other than a regular file of sane size where the rebase reads: a
// record committed as a symlink (to /dev/zero, to a FIFO, out of the tree) would be followed
// once checked out, and one such branch must not take the whole run down.
func checkReadable(ctx context.Context, repo string, p plan) error {
	t, err := gittree.Open(ctx, repo, p.commit)
	if err != nil {
		return branchError(p.branch, "%v", err)
	}
	read := append(commit.Paths(), recorded.LastRebaseFile)
	for _, name := range t.Names() {
		if !within(name, read) {
			continue
		}
		if err := t.Check(name, 0); err != nil {
			return branchError(p.branch, "%v; the rebase reads regular files only", err)
		}
	}
	return nil
}

// within reports whether p is one of paths or inside one of them.
func within(p string, paths []string) bool {
	for _, d := range paths {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

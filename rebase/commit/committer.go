package commit

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// committer makes the commits of one run from an index file of its own, so the repository's
// index (the person's staged work) is neither read nor committed.
type committer struct {
	root, tmp, index string
	// repoIndex is the repository's own index file (the person's).
	repoIndex string
	// prefix is root's path in the repository ("" at its top, else ending in "/"): index
	// entries and trees name files from the top.
	prefix string
	// format is the repository's object format (sha1 or sha256), to name blobs as git does.
	format string
}

func newCommitter(ctx context.Context, root string) (*committer, error) {
	out, err := git.Line(ctx, root, "rev-parse", "--show-object-format", "--show-prefix", "--git-path", "index")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("git rev-parse in %s: unexpected output %q", root, out)
	}
	repoIndex := lines[2]
	if !filepath.IsAbs(repoIndex) {
		repoIndex = filepath.Join(root, repoIndex)
	}
	tmp, err := os.MkdirTemp("", "lvms-rebase-commit-")
	if err != nil {
		return nil, err
	}
	return &committer{root: root, tmp: tmp, index: filepath.Join(tmp, "index"), repoIndex: repoIndex, format: lines[0], prefix: lines[1]}, nil
}

func (c *committer) close() { _ = os.RemoveAll(c.tmp) }

// git runs git on the committer's own index; pathspecs are literal (a file name is never a glob).
func (c *committer) git(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := git.Cmd{Dir: c.root, Args: args, Env: []string{"GIT_INDEX_FILE=" + c.index, "GIT_LITERAL_PATHSPECS=1"}}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output(ctx)
	return strings.TrimRight(string(out), "\n"), err
}

// objectID is git's name of a blob holding data.
func (c *committer) objectID(data []byte) string {
	newHash := sha1.New // git names objects by SHA-1 (or SHA-256), not for security
	if c.format == "sha256" {
		newHash = sha256.New
	}
	h := newHash()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// staged is what one phase commits: each written path with its mode and blob, and the removed paths.
type staged struct {
	write   []string
	mode    map[string]string
	oid     map[string]string
	removed []string
}

// commit makes ph's commit when it changes anything; false when it would be empty.
func (c *committer) commit(ctx context.Context, in Input, ph phase) (bool, error) {
	st := staged{mode: map[string]string{}, oid: map[string]string{}}
	for _, p := range slices.Sorted(maps.Keys(in.Files)) {
		if under(p, ph.paths) {
			st.write = append(st.write, p)
		}
	}
	for _, p := range in.Removed {
		if under(p, ph.paths) {
			st.removed = append(st.removed, p)
		}
	}
	if len(st.write)+len(st.removed) == 0 {
		return false, nil
	}
	head, err := c.head(ctx)
	if err != nil {
		return false, err
	}
	if err := c.stage(ctx, in, head, &st); err != nil {
		return false, err
	}
	tree, err := c.git(ctx, nil, "write-tree")
	if err != nil {
		return false, err
	}
	if head != "" {
		if headTree, err := c.git(ctx, nil, "rev-parse", head+"^{tree}"); err != nil || headTree == tree {
			return false, err
		}
	}
	// The repository's hooks run (pre-commit, commit-msg, post-commit) on this index, with
	// git's ordinary pathspecs: a hook's glob ('*.yaml') stays a glob, as for a person's commit.
	hooked := git.Cmd{Dir: c.root, Args: []string{"commit", "-q", "-m", ph.message}, Env: []string{"GIT_INDEX_FILE=" + c.index}}
	if _, err := hooked.Output(ctx); err != nil {
		return false, err
	}
	made, err := c.head(ctx)
	if err != nil {
		return true, err
	}
	verr := c.verify(ctx, head, made, st)
	// The repository's index follows HEAD for these paths (the work tree already holds them).
	if err := c.syncIndex(ctx, st); err != nil && verr == nil {
		verr = err
	}
	return true, verr
}

// head is the commit HEAD names, "" on an unborn branch.
func (c *committer) head(ctx context.Context) (string, error) {
	out, err := c.git(ctx, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		if _, uerr := c.git(ctx, nil, "symbolic-ref", "-q", "HEAD"); uerr == nil {
			if _, herr := c.git(ctx, nil, "rev-parse", "-q", "--verify", "HEAD"); herr != nil {
				return "", nil // unborn
			}
		}
		return "", err
	}
	return out, nil
}

// indexAt makes the committer's index hold head's tree (nothing when unborn). It starts from a
// copy of the repository's index so that the files' stat data carries over (read-tree -m keeps
// it where the content matches head): from a bare tree, git would hash every file of the
// checkout again for each commit. Entries the person staged become head's again.
func (c *committer) indexAt(ctx context.Context, head string) error {
	_ = os.Remove(c.index)
	if head == "" {
		_, err := c.git(ctx, nil, "read-tree", "--empty")
		return err
	}
	if c.copyIndex() == nil {
		if _, err := c.git(ctx, nil, "read-tree", "-m", head); err == nil {
			return nil
		}
		_ = os.Remove(c.index)
	}
	_, err := c.git(ctx, nil, "read-tree", head)
	return err
}

// copyIndex copies the repository's index file to the committer's, streamed: its size is the
// repository's (git's own file, not capped), its type must be a regular file's.
func (c *committer) copyIndex() error {
	in, _, err := safefile.Open(c.repoIndex, safefile.Options{Max: safefile.NoSizeCap})
	if err != nil {
		return err
	}
	defer in.Close()
	// safefile: opened to write, in the run's own temporary directory; nothing is read.
	out, err := os.OpenFile(c.index, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// stage fills the committer's index with HEAD's tree and the phase's files as the run wrote
// them: each work tree file must still hold those bytes; its blob is written without filters.
func (c *committer) stage(ctx context.Context, in Input, head string, st *staged) error {
	if err := c.indexAt(ctx, head); err != nil {
		return err
	}
	var paths bytes.Buffer
	for _, p := range st.write {
		full := filepath.Join(in.Root, filepath.FromSlash(p))
		mode, err := fileMode(in.Root, p)
		if err != nil {
			return err
		}
		// One byte over what the run wrote is enough to tell a changed file, and a link or a
		// FIFO put in its place is refused, never followed or waited on.
		if cur, err := safefile.ReadIn(in.Root, p, int64(len(in.Files[p]))+1); err != nil || !bytes.Equal(cur, in.Files[p]) {
			return fmt.Errorf("%s no longer holds what the run wrote (changed since): %v", p, err)
		}
		st.mode[p], st.oid[p] = mode, c.objectID(in.Files[p])
		paths.WriteString(full + "\n")
	}
	var info bytes.Buffer
	if len(st.write) > 0 {
		out, err := c.git(ctx, paths.Bytes(), "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return err
		}
		ids := strings.Fields(out)
		for i, p := range st.write {
			if i >= len(ids) || ids[i] != st.oid[p] {
				return fmt.Errorf("%s changed while it was being committed", p)
			}
			fmt.Fprintf(&info, "%s %s\t%s\x00", st.mode[p], st.oid[p], c.prefix+p)
		}
	}
	zero := strings.Repeat("0", len(c.objectID(nil)))
	for _, p := range st.removed {
		fmt.Fprintf(&info, "0 %s\t%s\x00", zero, c.prefix+p)
	}
	_, err := c.git(ctx, info.Bytes(), "update-index", "-z", "--index-info")
	return err
}

// verify checks the commit made on top of head holds exactly the phase: its parent is head,
// it changes only the phase's paths, each written file with the run's bytes and each removed
// one gone. A hook that reformats a file or stages another one makes it fail, naming the file.
func (c *committer) verify(ctx context.Context, head, made string, st staged) error {
	undo := "the commit is kept"
	if head != "" {
		undo = fmt.Sprintf("undo the commit with git reset --soft %.12s", head)
	}
	parent, _ := c.git(ctx, nil, "rev-parse", "-q", "--verify", made+"^1")
	if made == head || parent != head {
		return fmt.Errorf("HEAD is %.12s after the commit, not a commit on top of %.12s: a hook moved it", made, head)
	}
	diffArgs := []string{"diff-tree", "-r", "-z", "--no-commit-id", "--name-only", "--no-renames", made}
	if head == "" {
		diffArgs = []string{"diff-tree", "-r", "-z", "--no-commit-id", "--name-only", "--root", made}
	}
	changed, err := c.git(ctx, nil, diffArgs...)
	if err != nil {
		return err
	}
	for _, p := range strings.Split(changed, "\x00") {
		rel, inside := strings.CutPrefix(p, c.prefix)
		if p != "" && (!inside || !slices.Contains(st.write, rel) && !slices.Contains(st.removed, rel)) {
			return fmt.Errorf("commit %.12s also holds %s, which the run did not write (a hook staged it); %s", made, p, undo)
		}
	}
	args := []string{"ls-tree", "-r", "-z", "--full-tree", made, "--"}
	for _, p := range append(slices.Clone(st.write), st.removed...) {
		args = append(args, c.prefix+p)
	}
	listed, err := c.git(ctx, nil, args...)
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, rec := range strings.Split(listed, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			got[strings.TrimPrefix(p, c.prefix)] = f[0] + " " + f[2]
		}
	}
	for _, p := range st.write {
		if want := st.mode[p] + " " + st.oid[p]; got[p] != want {
			return fmt.Errorf("%s: the commit holds %q, not the bytes the run wrote (%s; a commit hook changed it?); %s",
				p, orAbsent(got[p]), want, undo)
		}
	}
	for _, p := range st.removed {
		if got[p] != "" {
			return fmt.Errorf("%s: the run removed it, the commit holds it (%s); %s", p, got[p], undo)
		}
	}
	return nil
}

func orAbsent(s string) string {
	if s == "" {
		return "no file"
	}
	return s
}

// syncIndex makes the repository's own index hold HEAD's version of the committed paths.
func (c *committer) syncIndex(ctx context.Context, st staged) error {
	args := append([]string{"reset", "-q", "--"}, append(slices.Clone(st.write), st.removed...)...)
	_, err := git.Cmd{Dir: c.root, Args: args, Env: []string{"GIT_LITERAL_PATHSPECS=1"}}.Output(ctx)
	return err
}

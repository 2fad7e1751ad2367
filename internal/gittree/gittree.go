// Package gittree reads branches of a git repository without checking them out: the local
// branch names, and a branch's tree as a read-only fs.FS (git ls-tree once, then git
// cat-file per file read). Its reads follow internal/safefile's policy for a tree's files,
// with safefile's errors: only regular files are readable (a symlink or submodule is an
// error, as the rebase never follows links), and each read is capped (safefile.DefaultMaxSize
// unless the reader asks for less, safefile.ReadFS). git runs through internal/git, with the
// context given to Open.
package gittree

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// MaxFileSize caps one file read from a tree: the cap of a checkout's files.
const MaxFileSize = safefile.DefaultMaxSize

// Branches lists the repository's local branch names, sorted (refs/heads/ only: a
// remote-tracking branch or a tag is not a branch of the clone).
func Branches(ctx context.Context, repo string) ([]string, error) {
	out, err := git.Run(ctx, repo, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Tree is one commit's tree. It implements fs.FS and fs.ReadFileFS.
type Tree struct {
	ctx       context.Context
	repo, rev string
	// Commit is the commit id rev resolved to.
	Commit string
	files  map[string]entry
}

type entry struct {
	mode, oid string
	size      int64
}

// Open reads the tree of rev (a branch name, tag or commit) in repo. Reads of its files run
// git with ctx.
func Open(ctx context.Context, repo, rev string) (*Tree, error) {
	id, err := git.Line(ctx, repo, "rev-parse", "--verify", "-q", rev+"^{commit}")
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: not a commit in %s", rev, repo)
	}
	t := &Tree{ctx: ctx, repo: repo, rev: rev, Commit: id, files: map[string]entry{}}
	out, err := git.Run(ctx, repo, "ls-tree", "-r", "-z", "--long", "--full-tree", t.Commit)
	if err != nil {
		return nil, err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type oid size
		if len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree %s: unexpected line %q", rev, rec)
		}
		var size int64 // "-" for a submodule: 0
		if f[3] != "-" {
			if size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("git ls-tree %s: unexpected size in %q", rev, rec)
			}
		}
		t.files[name] = entry{mode: f[0], oid: f[2], size: size}
	}
	return t, nil
}

// Names lists the paths of the tree's entries (files, links, submodules), sorted.
func (t *Tree) Names() []string { return slices.Sorted(maps.Keys(t.files)) }

// Stat gives an entry's git mode ("100644", "100755", "120000" a symlink, "160000" a
// submodule) and size.
func (t *Tree) Stat(name string) (mode string, size int64, ok bool) {
	e, ok := t.files[name]
	return e.mode, e.size, ok
}

// ReadFile returns the content of a regular file of the tree.
func (t *Tree) ReadFile(name string) ([]byte, error) { return t.ReadFileMax(name, MaxFileSize) }

// ReadFileMax returns the content of a regular file of the tree of at most max bytes
// (safefile.MaxReader).
func (t *Tree) ReadFileMax(name string, max int64) ([]byte, error) {
	if max <= 0 || max > MaxFileSize {
		max = MaxFileSize
	}
	if err := t.Check(name, max); err != nil {
		return nil, err
	}
	data, err := git.Cmd{Dir: t.repo, Args: []string{"cat-file", "blob", t.files[name].oid}, MaxOutput: max}.Output(t.ctx)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// Check says, without reading it, whether ReadFileMax(name, max) may read the entry name: the
// same errors (safefile's for a link, a submodule or a file over max, named rev:name).
func (t *Tree) Check(name string, max int64) error {
	if max <= 0 || max > MaxFileSize {
		max = MaxFileSize
	}
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	e, ok := t.files[name]
	if !ok {
		return &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	at := t.rev + ":" + name // the name errors give, as git spells a file of a revision
	if e.mode != "100644" && e.mode != "100755" {
		return &safefile.Error{Path: at, Mode: gitMode(e.mode), What: gitKind(e.mode)}
	}
	if e.size > max {
		return &safefile.Error{Path: at, Size: e.size, Max: max}
	}
	return nil
}

// gitMode is the file type of a git tree entry's mode that is not a regular file.
func gitMode(mode string) fs.FileMode {
	switch mode {
	case "120000":
		return fs.ModeSymlink
	case "040000":
		return fs.ModeDir
	}
	return fs.ModeIrregular // a submodule (160000) or a mode git does not write
}

// gitKind names a git tree entry that is not a regular file, with its mode.
func gitKind(mode string) string {
	switch mode {
	case "120000":
		return "a symbolic link, git mode " + mode
	case "160000":
		return "a submodule, git mode " + mode
	}
	return "git mode " + mode
}

// Open implements fs.FS for regular files.
func (t *Tree) Open(name string) (fs.File, error) {
	data, err := t.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &file{Reader: bytes.NewReader(data), name: path.Base(name), size: int64(len(data))}, nil
}

type file struct {
	*bytes.Reader
	name string
	size int64
}

func (f *file) Stat() (fs.FileInfo, error) { return f, nil }
func (f *file) Close() error               { return nil }
func (f *file) Name() string               { return f.name }
func (f *file) Size() int64                { return f.size }
func (f *file) Mode() fs.FileMode          { return 0o444 }
func (f *file) ModTime() time.Time         { return time.Time{} }
func (f *file) IsDir() bool                { return false }
func (f *file) Sys() any                   { return nil }

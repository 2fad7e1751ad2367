// Package gittree reads branches of a git repository without checking them out: the local
// branch names, and a branch's tree as a read-only fs.FS (git ls-tree once, then git
// cat-file per file read). Only regular files are readable (a symlink or submodule is an
// error, as the rebase never follows links), and each read is capped.
package gittree

import (
	"bytes"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"
)

// MaxFileSize caps one file read from a tree.
const MaxFileSize = 16 << 20

// Git runs git in repo and returns its stdout; the error carries git's stderr.
func Git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), repo, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Branches lists the repository's local branch names, sorted.
func Branches(repo string) ([]string, error) {
	out, err := Git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Tree is one commit's tree. It implements fs.FS and fs.ReadFileFS.
type Tree struct {
	repo, rev string
	// Commit is the commit id rev resolved to.
	Commit string
	files  map[string]entry
}

type entry struct {
	mode, oid string
	size      int64
}

// Open reads the tree of rev (a branch name, tag or commit) in repo.
func Open(repo, rev string) (*Tree, error) {
	id, err := Git(repo, "rev-parse", "--verify", "-q", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s: not a commit in %s", rev, repo)
	}
	t := &Tree{repo: repo, rev: rev, Commit: strings.TrimSpace(string(id)), files: map[string]entry{}}
	out, err := Git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", t.Commit)
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

// ReadFile returns the content of a regular file of the tree.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	e, ok := t.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	if e.mode != "100644" && e.mode != "100755" {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("not a regular file in %s (mode %s)", t.rev, e.mode)}
	}
	if e.size > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%d bytes in %s, over the %d-byte cap", e.size, t.rev, MaxFileSize)}
	}
	return Git(t.repo, "cat-file", "blob", e.oid)
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

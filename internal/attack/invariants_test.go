package attack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/dirtree"
)

const lockPath = "scripts/auto-rebase/lvms-rebase.lock.yaml"

func snapshot(t *testing.T, root string) map[string]dirtree.Entry {
	t.Helper()
	s, err := dirtree.Snapshot(root)
	if err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return s
}

// checkConfined is invariant 2: every path of the world that changed is one the row's mode
// may change, given how the run ended.
func checkConfined(t *testing.T, r *row, w *world, res result, before, after map[string]dirtree.Entry) {
	t.Helper()
	head := ""
	if b, err := os.ReadFile(filepath.Join(w.tree, ".git", "HEAD")); err == nil {
		head = strings.TrimPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	}
	cache, _ := filepath.Rel(w.root, w.cache)
	for _, p := range slices.Sorted(maps.Keys(union(before, after))) {
		b, inBefore := before[p]
		a, inAfter := after[p]
		if inBefore && inAfter && b == a {
			continue
		}
		if r.leftBy[p] && !inAfter {
			continue // the repairing run removes what the interrupted one left
		}
		c := change{path: p, existed: inBefore, exists: inAfter, dir: inAfter && a.Mode.IsDir()}
		why := ""
		if p == cache || strings.HasPrefix(p, cache+"/") {
			c.path = strings.TrimPrefix(p, cache+"/")
			why = forbiddenInCache(res, c)
		} else {
			why = forbidden(r, res, c, head)
		}
		if why != "" {
			t.Errorf("invariant 2: %s changed (%s → %s): %s", p, describe(b, inBefore), describe(a, inAfter), why)
		}
	}
}

// forbiddenInCache: a cached blob, manifest or download is content-addressed and never
// changes or goes; the tag records (tags/) are rewritten with what the registry listed last.
func forbiddenInCache(res result, c change) string {
	if c.existed && !c.exists {
		return "the cache lost an entry"
	}
	if c.existed && !strings.HasPrefix(c.path, "tags/") {
		return "a content-addressed cache entry changed"
	}
	if res.code == exitUsage {
		return "a usage error comes before any fetch"
	}
	return ""
}

// change is a path of the world (or of one of its parts) that differs after the run.
type change struct {
	path            string
	existed, exists bool
	// dir: what exists now is a directory.
	dir bool
}

func union(a, b map[string]dirtree.Entry) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func describe(e dirtree.Entry, ok bool) string {
	if !ok {
		return "absent"
	}
	return e.String()
}

// forbidden says why a change of a world path is not the run's to make ("" when it is).
func forbidden(r *row, res result, c change, head string) string {
	top, rest, _ := strings.Cut(c.path, "/")
	c.path = rest
	switch top {
	case "out":
		switch {
		case res.code == exitUsage:
			return "no output is written by a run refused"
		case r.mode == modeApply:
			return "" // the runtime lvmd copy is written (atomically) before the cluster is reached
		case r.mode == modeFleet && c.path == "bodies" && !c.existed && c.dir:
			return "" // --pr-body-dir is made before any branch's work, to fail early when it cannot be
		case res.code == exitSIGINT || res.code == exitSIGTERM:
			return "no output is written by a run interrupted"
		}
		return ""
	case "tmp":
		return forbiddenInTmp(r, c)
	case "tree":
		return forbiddenInTree(r, res, c, head)
	}
	return "outside the tree, the cache, the temporary directory and the outputs"
}

// forbiddenInTmp: a run leaves nothing in $TMPDIR unless it was killed; a later run removes
// what a killed one left (its own names only).
func forbiddenInTmp(r *row, c change) string {
	switch {
	case r.killedHard() && !c.existed:
		return ""
	case c.existed && !c.exists && strings.HasPrefix(c.path, "lvms-rebase-"):
		return ""
	case c.existed:
		return "a temporary file of someone else changed"
	}
	return "a temporary file is left behind"
}

func forbiddenInTree(r *row, res result, c change, head string) string {
	wrote := res.code == exitOK || r.swapMayComplete || r.killedHard()
	switch p := c.path; {
	case strings.HasPrefix(p, ".lvms-rebase-") && !c.existed:
		if r.killedHard() {
			return ""
		}
		return "the run's work directory is left behind"
	case strings.HasPrefix(p, ".git/"):
		c.path = strings.TrimPrefix(p, ".git/")
		return forbiddenInGit(r, res, c, head)
	case managed(p) && (r.mode == modeWrite || r.mode == modeCommit):
		if wrote {
			return ""
		}
		return "a managed path changed by a run that failed before its swap"
	case managed(p):
		return "a managed path changed in " + string(r.mode) + " mode"
	}
	return "not a path a rebase writes"
}

func forbiddenInGit(r *row, res result, c change, head string) string {
	p := c.path
	switch r.mode {
	case modeCommit:
		if res.code != exitOK && !r.swapMayComplete {
			return "git state changed by a run that made no commit"
		}
		if strings.HasPrefix(p, "objects/") || slices.Contains([]string{"index", "COMMIT_EDITMSG", "ORIG_HEAD", "logs/HEAD",
			"refs/heads/" + head, "logs/refs/heads/" + head, "logs", "logs/refs", "logs/refs/heads"}, p) {
			return ""
		}
		return "not a commit on the checked-out branch"
	case modeFleet:
		if strings.HasPrefix(p, "objects/") || isResultRef(p) || (!c.existed && slices.Contains([]string{"logs", "logs/refs", "logs/refs/heads"}, p)) {
			return ""
		}
		if p == "worktrees" || strings.HasPrefix(p, "worktrees/") {
			if r.killedHard() || !c.exists {
				return "" // a killed run's worktree, removed by the next
			}
			return "a temporary worktree is left registered"
		}
		return "--branches touches only lvms-rebase/<b> and objects"
	}
	return "git state changed in " + string(r.mode) + " mode"
}

func isResultRef(p string) bool {
	for _, dir := range []string{"refs/heads/lvms-rebase", "logs/refs/heads/lvms-rebase"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// killedHard is a row whose process is SIGKILLed: it may leave its work directory and a
// half-done swap for the next run to repair.
func (r *row) killedHard() bool { return r.when != nil && r.when.sig == syscall.SIGKILL }

// checkDone is invariant 1: a run that exits 0 did everything its mode promises.
func checkDone(t *testing.T, r *row, w *world, res result) {
	t.Helper()
	switch r.mode {
	case modeWrite:
		lockHoldsTree(t, w.tree)
		rendersBack(t, w)
	case modeCommit:
		lockHoldsTree(t, w.tree)
		rendersBack(t, w)
		headHoldsLock(t, w.tree)
	case modeFleet:
		branchesDone(t, w, r.args(w))
	case modeRead:
		if len(r.args(w)) > 0 && r.args(w)[0] == "outdated" {
			outdatedChecked(t, res)
		}
	}
}

// lockFile is the part of the lock the invariants read: what each file's bytes must hash to.
type lockFile struct {
	Files []struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	} `json:"files"`
}

func parseLock(t *testing.T, data []byte) lockFile {
	t.Helper()
	var l lockFile
	if err := yaml.Unmarshal(data, &l); err != nil {
		t.Fatalf("invariant 1: the lock does not parse: %v", err)
	}
	if len(l.Files) == 0 {
		t.Fatal("invariant 1: the lock records no file")
	}
	return l
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// lockHoldsTree: every file the lock records has exactly the lock's bytes in the tree.
func lockHoldsTree(t *testing.T, tree string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tree, lockPath))
	if err != nil {
		t.Fatalf("invariant 1: exit 0 and no lock: %v", err)
	}
	for _, f := range parseLock(t, data).Files {
		b, err := os.ReadFile(filepath.Join(tree, f.Path))
		if err != nil || sum(b) != f.SHA256 {
			t.Errorf("invariant 1: %s does not hold the bytes the lock records (%v)", f.Path, err)
		}
	}
}

// rendersBack: --check re-renders the tree from its lock and finds it current.
func rendersBack(t *testing.T, w *world) {
	t.Helper()
	res := runProc(proc{args: append([]string{"--microshift-dir", w.tree, "--check"}, append(registryArgs(reg.Host(), reg.MirrorFlags(), w.cache), reg.SignatureFlags()...)...),
		env: childEnv(w.home), dir: w.root})
	if res.code != exitOK {
		t.Errorf("invariant 1: exit 0, yet --check on the tree exits %d:\n%s", res.code, clip(res.stderr))
	}
}

// headHoldsLock: HEAD holds the lock and exactly the lock's bytes for every file it records,
// and git sees none of our paths modified or untracked.
func headHoldsLock(t *testing.T, tree string) {
	t.Helper()
	committedLock, err := gitOutput(tree, "cat-file", "blob", "HEAD:"+lockPath)
	if err != nil {
		t.Fatalf("invariant 1: exit 0 with --commit, yet HEAD has no lock: %v", err)
	}
	if disk, _ := os.ReadFile(filepath.Join(tree, lockPath)); !bytes.Equal(disk, committedLock) {
		t.Errorf("invariant 1: HEAD's lock differs from the tree's")
	}
	for _, f := range parseLock(t, committedLock).Files {
		blob, err := gitOutput(tree, "cat-file", "blob", "HEAD:"+f.Path)
		if err != nil {
			t.Errorf("invariant 1: exit 0 with --commit, yet HEAD has no %s: %v", f.Path, err)
			continue
		}
		if sum(blob) != f.SHA256 {
			t.Errorf("invariant 1: HEAD:%s is not the bytes the lock records", f.Path)
		}
	}
	for _, line := range strings.Split(gitRun(t, tree, "status", "--porcelain", "--untracked-files=all", "--no-renames"), "\n") {
		if len(line) > 3 && managed(line[3:]) {
			t.Errorf("invariant 1: exit 0 with --commit, yet git status shows %q", line)
		}
	}
}

// branchesDone: each branch --branches named has its result branch, whose tree holds the
// lock's bytes; no temporary worktree is left.
func branchesDone(t *testing.T, w *world, args []string) {
	t.Helper()
	var branches []string
	for i, a := range args {
		if a == "--branches" && i+1 < len(args) {
			branches = append(branches, strings.Split(args[i+1], ",")...)
		}
	}
	if len(branches) == 0 {
		t.Fatal("invariant 1: a --branches row without branches")
	}
	for _, b := range branches {
		ref := "lvms-rebase/" + b
		for _, f := range parseLock(t, gitShow(t, w.tree, ref, lockPath)).Files {
			if got := sum(gitShow(t, w.tree, ref, f.Path)); got != f.SHA256 {
				t.Errorf("invariant 1: %s:%s is not the bytes its lock records", ref, f.Path)
			}
		}
	}
	if wts := gitRun(t, w.tree, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("invariant 1: temporary worktrees left:\n%s", wts)
	}
}

// outdatedChecked: outdated exits 0 only when it checked at least one branch and found each
// current (its rows ask for -o json).
func outdatedChecked(t *testing.T, res result) {
	t.Helper()
	var rep struct {
		Items []struct{ Branch, Status string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("invariant 1: outdated -o json: %v\n%s", err, res.stdout)
	}
	if len(rep.Items) == 0 {
		t.Error("invariant 1: outdated exits 0 having checked no branch")
	}
	for _, it := range rep.Items {
		if it.Status != "current" {
			t.Errorf("invariant 1: outdated exits 0 with %s %s", it.Branch, it.Status)
		}
	}
}

func gitShow(t *testing.T, dir, rev, path string) []byte {
	t.Helper()
	return []byte(gitRun(t, dir, "cat-file", "blob", rev+":"+path))
}

// gitRun is git for the invariants' reading of a repository, isolated like the processes.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitOutput(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func gitOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out, nil
}

package commit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// treesDir holds the generated MicroShift-like checkouts (internal/testing/fixtures.TreesDir):
// 5.0 names its bundle record last_rebase_lvms.sh and its recipe assets_lvms.yaml, 4.17
// last_lvms_rebase.sh and lvms_assets.yaml.
const treesDir = "../../testdata/microshift-trees"

// The paths a run hands Phases: the directories it manages and the branch's bundle record.
var (
	managed   = []string{"assets/components/lvms", "assets/components/csi-snapshot-controller"}
	record50  = []string{"scripts/auto-rebase/last_rebase_lvms.sh"}
	record417 = []string{"scripts/auto-rebase/last_lvms_rebase.sh"}
)

// The messages of MicroShift's own scripts, which history must keep reading the same.
const (
	messageLock  = "update lvms-rebase.lock.yaml"
	messageRec50 = "update last_rebase_lvms.sh"
	messageImgs  = "update LVMS images"
	messageMans  = "update LVMS manifests"
)

// baseFiles are added to the fixture tree before the base commit: a lock and storage
// components from an earlier rebase, so that a run can modify and remove files (git must
// also find every path a phase stages).
var baseFiles = map[string]string{
	"scripts/auto-rebase/lvms-rebase.lock.yaml":                     "bundle: v1\n",
	"assets/components/lvms/keep.yaml":                              "kind: ConfigMap # v1\n",
	"assets/components/lvms/old.yaml":                               "kind: Service\n",
	"assets/components/csi-snapshot-controller/serviceaccount.yaml": "kind: ServiceAccount # v1\n",
}

// rebaseWrites is what a run on the 5.0 tree writes in every phase, plus the developer's own
// work (an edited last_rebase.sh and an OVN asset) that no phase may take.
var rebaseWrites = edits{
	write: map[string]string{
		"scripts/auto-rebase/lvms-rebase.lock.yaml":                     "bundle: v2\n",
		"scripts/auto-rebase/last_rebase_lvms.sh":                       "./scripts/auto-rebase/rebase_lvms.sh to \"b:v2\"\n",
		"assets/release/release-x86_64.json":                            "{\"release\": {\"base\": \"v2\"}}\n",
		"assets/release/release-aarch64.json":                           "{\"release\": {\"base\": \"v2\"}}\n",
		"assets/components/lvms/keep.yaml":                              "kind: ConfigMap # v2\n",
		"assets/components/lvms/new.yaml":                               "kind: Deployment\n",
		"assets/components/csi-snapshot-controller/serviceaccount.yaml": "kind: ServiceAccount # v2\n",
		"scripts/auto-rebase/assets_lvms.yaml":                          "# entries for new.yaml\n",
	},
	remove: []string{"assets/components/lvms/old.yaml"},
	person: map[string]string{
		"scripts/auto-rebase/last_rebase.sh":   "# the developer's edit\n",
		"assets/components/ovn/namespace.yaml": "# the developer's edit\n",
	},
}

// rebaseWritesFiles are the commits rebaseWrites gives, by message.
var rebaseWritesFiles = map[string][]string{
	messageLock:  {"M scripts/auto-rebase/lvms-rebase.lock.yaml"},
	messageRec50: {"M scripts/auto-rebase/last_rebase_lvms.sh"},
	messageImgs:  {"M assets/release/release-aarch64.json", "M assets/release/release-x86_64.json"},
	messageMans: {
		"M assets/components/csi-snapshot-controller/serviceaccount.yaml",
		"M assets/components/lvms/keep.yaml",
		"A assets/components/lvms/new.yaml",
		"D assets/components/lvms/old.yaml",
		"M scripts/auto-rebase/assets_lvms.yaml",
	},
}

// edits are what a run writes and removes, and what a person edited in the work tree besides.
type edits struct {
	write  map[string]string
	remove []string
	person map[string]string
}

// commitFiles is one commit: its message and its files as "STATUS path".
type commitFiles struct {
	Message string
	Files   []string
}

// TestPhasesCommitEachPhaseWithItsOwnFiles: each phase is one commit with the legacy scripts'
// message and only its own paths (deletions included), in order; a phase with nothing
// staged is skipped; what the developer had edited or staged stays out of every commit.
func TestPhasesCommitEachPhaseWithItsOwnFiles(t *testing.T) {
	withIdentity(t)
	for _, tc := range []struct {
		name, tree string
		records    []string
		edits      edits
		want       []commitFiles
		// stay are the changes left uncommitted (git status --porcelain).
		stay []string
	}{{
		name: "every phase has changes: four commits in order, the developer's work left out",
		tree: "5.0", records: record50, edits: rebaseWrites,
		want: []commitFiles{
			{messageLock, rebaseWritesFiles[messageLock]},
			{messageRec50, rebaseWritesFiles[messageRec50]},
			{messageImgs, rebaseWritesFiles[messageImgs]},
			{messageMans, rebaseWritesFiles[messageMans]},
		},
		stay: []string{"A  NOTES", " M assets/components/ovn/namespace.yaml", " M scripts/auto-rebase/last_rebase.sh"},
	}, {
		name: "the lock and images unchanged: those phases are skipped",
		tree: "5.0", records: record50,
		edits: edits{write: map[string]string{
			"scripts/auto-rebase/last_rebase_lvms.sh": "# v2\n",
			"assets/components/lvms/new.yaml":         "kind: Deployment\n",
		}},
		want: []commitFiles{
			{messageRec50, []string{"M scripts/auto-rebase/last_rebase_lvms.sh"}},
			{messageMans, []string{"A assets/components/lvms/new.yaml"}},
		},
		stay: []string{"A  NOTES"},
	}, {
		name: "a 4.17 branch: its record named in the message, its lvms_assets.yaml with the manifests",
		tree: "4.17", records: record417,
		edits: edits{write: map[string]string{
			"scripts/auto-rebase/last_lvms_rebase.sh": "# v2\n",
			"scripts/auto-rebase/lvms_assets.yaml":    "# entries for new.yaml\n",
			"assets/components/lvms/new.yaml":         "kind: Deployment\n",
		}},
		want: []commitFiles{
			{"update last_lvms_rebase.sh", []string{"M scripts/auto-rebase/last_lvms_rebase.sh"}},
			{messageMans, []string{"A assets/components/lvms/new.yaml", "M scripts/auto-rebase/lvms_assets.yaml"}},
		},
		stay: []string{"A  NOTES"},
	}, {
		name: "nothing written: no commit",
		tree: "5.0", records: record50,
		stay: []string{"A  NOTES"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base := newRepo(t, tc.tree)
			// Work the developer had staged before the run: a commit of the run must not take it.
			gitrepo.WriteFile(t, dir, "NOTES", "work in progress\n", 0o644)
			gitrepo.Git(t, dir, "add", "NOTES")
			tc.edits.apply(t, dir)
			made, err := Phases(context.Background(), tc.edits.input(dir, tc.records))
			if err != nil {
				t.Fatalf("Phases: %v", err)
			}
			var wantMade []string
			for _, c := range tc.want {
				wantMade = append(wantMade, c.Message)
			}
			if diff := cmp.Diff(wantMade, made, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commits reported (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, commitsSince(t, dir, base), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commits in history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.stay, status(t, dir)); diff != "" {
				t.Errorf("uncommitted changes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPhasesStopAndReportTheCommitsMade: an interrupt (a cancelled ctx) or a commit git
// refuses ends the series; what was committed is reported and is in history, and the
// remaining phases' files are left in the work tree.
func TestPhasesStopAndReportTheCommitsMade(t *testing.T) {
	withIdentity(t)
	for _, tc := range []struct {
		name string
		// interruptAfter is the number of commits after which ctx is cancelled (-1: never).
		interruptAfter int
		// refuse is a commit message the repository's commit-msg hook rejects.
		refuse   string
		wantMade []string
		wantErr  string
		// left are paths whose changes must still be uncommitted.
		left []string
	}{{
		name: "interrupted before the first commit", interruptAfter: 0,
		wantErr: `stopped before the commit "update lvms-rebase.lock.yaml" (made: 0)`,
		left:    []string{"scripts/auto-rebase/lvms-rebase.lock.yaml", "assets/components/lvms/new.yaml"},
	}, {
		name: "interrupted while the lock is committed", interruptAfter: 1,
		wantMade: []string{messageLock},
		wantErr:  `stopped before the commit "update last_rebase_lvms.sh" (made: 1)`,
		left:     []string{"scripts/auto-rebase/last_rebase_lvms.sh", "assets/release/release-x86_64.json", "assets/components/lvms/new.yaml"},
	}, {
		name: "interrupted while the images are committed", interruptAfter: 3,
		wantMade: []string{messageLock, messageRec50, messageImgs},
		wantErr:  `stopped before the commit "update LVMS manifests" (made: 3)`,
		left:     []string{"assets/components/lvms/new.yaml", "scripts/auto-rebase/assets_lvms.yaml"},
	}, {
		name: "git refuses the images commit", interruptAfter: -1, refuse: messageImgs,
		wantMade: []string{messageLock, messageRec50},
		wantErr:  "commit-msg hook refused",
		left:     []string{"assets/release/release-x86_64.json", "assets/components/lvms/new.yaml"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base := newRepo(t, "5.0")
			rebaseWrites.apply(t, dir)
			ctx := context.Background()
			if tc.interruptAfter >= 0 {
				ctx = interruptAfterCommits(t, dir, tc.interruptAfter)
			}
			if tc.refuse != "" {
				installHook(t, dir, "commit-msg", "if grep -qx '"+tc.refuse+"' \"$1\"; then echo 'commit-msg hook refused' >&2; exit 1; fi\n")
			}
			made, err := Phases(ctx, rebaseWrites.input(dir, record50))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantMade, made, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commits reported (-want +got):\n%s", diff)
			}
			var inHistory []string
			for _, c := range commitsSince(t, dir, base) {
				inHistory = append(inHistory, c.Message)
			}
			if diff := cmp.Diff(tc.wantMade, inHistory, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commits in history (-want +got):\n%s", diff)
			}
			st := strings.Join(status(t, dir), "\n")
			for _, p := range tc.left {
				if !strings.Contains(st, p) {
					t.Errorf("%s is no longer uncommitted:\n%s", p, st)
				}
			}
		})
	}
}

// TestRecordMessageNamesTheBranchRecord: the record commit names the file by its base name,
// as each branch's own rebase script does (last_lvms_rebase.sh up to 4.17).
func TestRecordMessageNamesTheBranchRecord(t *testing.T) {
	for _, tc := range []struct {
		records []string
		want    string
	}{
		{record417, "update last_lvms_rebase.sh"},
		{record50, "update last_rebase_lvms.sh"},
		{[]string{"last_rebase_lvms.sh"}, "update last_rebase_lvms.sh"},
		{append(append([]string{}, record417...), record50...), "update last_lvms_rebase.sh, last_rebase_lvms.sh"},
	} {
		if got := recordMessage(tc.records); got != tc.want {
			t.Errorf("recordMessage(%q) = %q, want %q", tc.records, got, tc.want)
		}
	}
}

// TestCheckTellsWhetherGitCanCommit: Check passes inside a work tree whose git knows both the
// author and the committer, and names what is missing otherwise.
func TestCheckTellsWhetherGitCanCommit(t *testing.T) {
	isolateGit(t)
	for _, tc := range []struct {
		name    string
		dir     func(t *testing.T) string
		wantErr string
	}{
		{"a work tree with an identity", func(t *testing.T) string { return identityRepo(t, "user") }, ""},
		{"a subdirectory of such a work tree", func(t *testing.T) string {
			dir := identityRepo(t, "user")
			gitrepo.WriteFile(t, dir, "scripts/auto-rebase/x", "", 0o644)
			return filepath.Join(dir, "scripts", "auto-rebase")
		}, ""},
		{"a directory outside any repository", func(t *testing.T) string { return t.TempDir() }, "is not inside a git work tree"},
		{"a bare repository", func(t *testing.T) string {
			dir := t.TempDir()
			gitrepo.Git(t, dir, "init", "-q", "--bare")
			return dir
		}, "is not inside a git work tree"},
		{"no identity", func(t *testing.T) string { return identityRepo(t) }, "git has no identity to commit with"},
		{"an author but no committer", func(t *testing.T) string { return identityRepo(t, "author") }, "git has no identity to commit with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(context.Background(), tc.dir(t))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), option.Commit.String()+": ")):
				t.Fatalf("Check: error %v, want one naming the option %s and containing %q", err, option.Commit, tc.wantErr)
			}
		})
	}
}

// isolateGit keeps the machine's git configuration and identity out of the test: no global
// or system config (a global user.email would hide a missing identity, a global hook or
// signing key would change the commits), no identity from the environment, and no
// repository above the test's directories.
func isolateGit(t testing.TB) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	gitrepo.Isolate(t)
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
}

// withIdentity is isolateGit with an author and committer in the environment, as a CI job
// sets them: Phases runs git without any -c.
func withIdentity(t testing.TB) {
	t.Helper()
	isolateGit(t)
	for _, who := range []string{"AUTHOR", "COMMITTER"} {
		t.Setenv("GIT_"+who+"_NAME", "LVMS Rebase Test")
		t.Setenv("GIT_"+who+"_EMAIL", "rebase-test@localhost")
	}
}

// identityRepo is a work tree whose git must not guess an identity (user.useConfigOnly),
// configured with user.* ("user"), author.* only ("author") or neither.
func identityRepo(t *testing.T, who ...string) string {
	t.Helper()
	dir := t.TempDir()
	gitrepo.Git(t, dir, "init", "-q")
	gitrepo.Git(t, dir, "config", "user.useConfigOnly", "true")
	for _, w := range who {
		gitrepo.Git(t, dir, "config", w+".name", "Someone")
		gitrepo.Git(t, dir, "config", w+".email", "someone@localhost")
	}
	return dir
}

// newRepo is a git work tree holding the fixture tree of minor and baseFiles, committed; it
// returns the directory and the base commit.
func newRepo(t testing.TB, minor string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(treesDir, minor))); err != nil {
		t.Fatal(err)
	}
	for p, data := range baseFiles {
		gitrepo.WriteFile(t, dir, p, data, 0o644)
	}
	gitrepo.Git(t, dir, "init", "-q")
	gitrepo.Git(t, dir, "add", "-A")
	gitrepo.Git(t, dir, "commit", "-qm", "base")
	return dir, strings.TrimSpace(gitrepo.Git(t, dir, "rev-parse", "HEAD"))
}

func (e edits) apply(t testing.TB, dir string) {
	t.Helper()
	for p, data := range e.write {
		gitrepo.WriteFile(t, dir, p, data, 0o644)
	}
	for p, data := range e.person {
		gitrepo.WriteFile(t, dir, p, data, 0o644)
	}
	for _, p := range e.remove {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
}

// input is what Phases is told the run wrote: the run's files, not the person's.
func (e edits) input(dir string, records []string) Input {
	in := Input{Root: dir, Managed: managed, Records: records, Files: map[string][]byte{}, Removed: e.remove}
	for p, data := range e.write {
		in.Files[p] = []byte(data)
	}
	return in
}

// interruptAfterCommits returns a context cancelled once n commits have been made in dir,
// as counted by a post-commit hook: an interrupt that arrives while commit n is being made.
func interruptAfterCommits(t *testing.T, dir string, n int) context.Context {
	t.Helper()
	counter := filepath.Join(t.TempDir(), "commits")
	installHook(t, dir, "post-commit", "echo >> '"+counter+"'\n")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &interrupting{Context: ctx, cancel: cancel, counter: counter, n: n}
}

type interrupting struct {
	context.Context
	cancel  context.CancelFunc
	counter string
	n       int
}

func (c *interrupting) Err() error {
	data, _ := os.ReadFile(c.counter)
	if bytes.Count(data, []byte("\n")) >= c.n {
		c.cancel()
	}
	return c.Context.Err()
}

// installHook adds a shell hook to dir's repository (core.hooksPath, outside the work tree).
func installHook(t *testing.T, dir, name, body string) {
	t.Helper()
	hooks := strings.TrimSpace(gitrepo.Git(t, dir, "config", "--default", "", "core.hooksPath"))
	if hooks == "" {
		hooks = t.TempDir()
		gitrepo.Git(t, dir, "config", "core.hooksPath", hooks)
	}
	if err := os.WriteFile(filepath.Join(hooks, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// commitsSince lists the commits after base, oldest first.
func commitsSince(t *testing.T, dir, base string) []commitFiles {
	t.Helper()
	var out []commitFiles
	for _, id := range strings.Fields(gitrepo.Git(t, dir, "rev-list", "--reverse", base+"..HEAD")) {
		c := commitFiles{Message: strings.TrimSpace(gitrepo.Git(t, dir, "log", "-1", "--format=%B", id))}
		for _, l := range strings.Split(strings.TrimSpace(gitrepo.Git(t, dir, "diff-tree", "--no-commit-id", "--name-status", "-r", "--no-renames", id)), "\n") {
			c.Files = append(c.Files, strings.Replace(l, "\t", " ", 1))
		}
		out = append(out, c)
	}
	return out
}

// status lists the uncommitted changes, staged or not (git status --porcelain).
func status(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Split(strings.TrimRight(gitrepo.Git(t, dir, "status", "--porcelain", "--untracked-files=all"), "\n"), "\n")
}

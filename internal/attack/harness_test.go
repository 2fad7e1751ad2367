package attack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/dirtree"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// class is an input class of the table: what kind of hostile input a row gives.
type class string

const (
	empty      class = "empty"
	absent     class = "absent"
	special    class = "special"
	huge       class = "huge"
	duplicated class = "duplicated"
	wrapped    class = "wrapped"
	colliding  class = "colliding"
	concurrent class = "concurrent"
	killed     class = "killed"
	plain      class = "plain" // the ordinary input, the baseline every class is measured against
)

// mode is what a command promises when it exits 0 (invariant 1) and what it may change on
// its way (invariant 2).
type mode string

const (
	modeWrite  mode = "write"  // rebase: managed paths; exit 0 ⇒ the lock holds the tree's bytes and --check passes
	modeCommit mode = "commit" // write + the commits: exit 0 ⇒ HEAD holds the lock's bytes, our paths clean
	modeRead   mode = "read"   // --dry-run, --diff, --check, resolve, outdated, lvmd check, version: nothing in the tree
	modeFleet  mode = "fleet"  // --branches: lvms-rebase/<b> refs and objects, never HEAD, index or work tree
	modeApply  mode = "apply"  // apply: the cluster (invariant 3) and the runtime lvmd copy
)

// Exit codes (cmd/lvms-rebase/app).
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitDrift   = 3
	exitSIGINT  = 130
	exitSIGTERM = 143
)

// world is everything a row may touch, under one directory that is snapshotted whole before
// and after the run: the tree (a checkout or a clone), the image cache, a home, the inputs
// the row made (in) and the outputs it asked for (out).
type world struct {
	root, tree, cache, home, in, out, tmp string
	reg                                   *testregistry.Registry
}

// row is one attack: a command line on a prepared world, and what must come of it.
type row struct {
	name  string
	class class
	mode  mode
	// tpl is the template copied into the tree (tplFresh, tplRebased, tplClone; "" leaves
	// the tree an empty directory).
	tpl string
	// faults, when set, give the row a registry of its own that misbehaves so.
	faults []testregistry.Fault
	// cold starts the row with an empty image cache (every blob is fetched).
	cold bool
	// setup shapes the world (hostile files, hooks, branches) before the snapshot.
	setup func(t *testing.T, w *world)
	// args is the command line (without the binary).
	args func(w *world) []string
	env  []string
	when *trigger
	// want is the exit code; names are what the one Error line must contain.
	want  int
	names []string
	// swapMayComplete: a run stopped by a signal or a failing hook after its journal may
	// leave the managed paths written (and says so); the tree is otherwise as it was.
	swapMayComplete bool
	// repair: after the run, the same command without the trigger must bring the tree to
	// its mode's postcondition (a killed run leaves a state the next run repairs).
	repair bool
	// leftBy are the paths an interrupted run of this row left, which its repairing run may
	// remove.
	leftBy map[string]bool
	// after checks what this row adds to the generic invariants.
	after func(t *testing.T, w *world, res result)
}

// runRows runs each row in parallel (rows share the binary and the registry, nothing else).
func runRows(t *testing.T, rows []row) {
	t.Helper()
	skipShort(t)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.name] {
			t.Fatalf("two rows named %q", r.name)
		}
		seen[r.name] = true
		if r.class == empty && r.want == exitOK {
			t.Fatalf("row %q: an empty input can never pass (principle 2)", r.name)
		}
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.run(t)
		})
	}
}

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the attack suite runs the real binary end to end")
	}
}

func newWorld(t *testing.T, r *row) *world {
	t.Helper()
	root, err := os.MkdirTemp(scratch, "row-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	w := &world{root: root, tree: filepath.Join(root, "tree"), cache: filepath.Join(root, "cache"),
		home: mkdir(root, "home"), in: mkdir(root, "in"), out: mkdir(root, "out"), tmp: mkdir(root, "tmp"), reg: reg}
	if r.tpl == "" {
		mkdir(root, "tree")
	} else if err := cp(filepath.Join(templates, r.tpl), w.tree); err != nil {
		t.Fatal(err)
	}
	if r.cold {
		mkdir(root, "cache")
	} else if err := cp(filepath.Join(templates, tplCache), w.cache); err != nil {
		t.Fatal(err)
	}
	if r.faults != nil {
		w.reg = testregistry.NewForTest(t, testregistry.Options{})
		for _, f := range r.faults {
			w.reg.Inject(f)
		}
	}
	return w
}

// registry is the row's registry arguments with its own cache.
func (w *world) registry() []string {
	return registryArgs(w.reg.Host(), w.reg.MirrorFlags(), w.cache)
}

// rebase is a rebase's arguments on the row's tree.
func (w *world) rebase(args ...string) []string {
	// The registry signs what it serves with keys of its own; a rebase trusts them by policy.
	return append(append(append([]string{"--microshift-dir", w.tree}, w.registry()...), w.reg.SignatureFlags()...), args...)
}

// command is a subcommand's arguments with the row's registry.
func (w *world) command(name string, args ...string) []string {
	return append(append(strings.Fields(name), w.registry()...), args...)
}

// proc is the row's process; the repairing run (withTrigger false) has no failpoint.
func (w *world) proc(r *row, args []string, withTrigger bool) proc {
	env := []string{"TMPDIR=" + w.tmp}
	for _, e := range r.env { // IN/ stands for the row's inputs
		env = append(env, strings.ReplaceAll(e, "=IN/", "="+w.in+"/"))
	}
	p := proc{args: args, env: childEnv(w.home, env...), dir: w.root}
	if withTrigger {
		p.when = r.when
	} else {
		p.env = childEnv(w.home, append(env, "LVMS_REBASE_PAUSE_AT")...)
	}
	return p
}

// bind gives the trigger's then the row's test and world.
func (r *row) bind(t *testing.T, w *world) {
	if r.when == nil || (r.when.then == nil && !r.when.marker) {
		return
	}
	when := *r.when
	if when.then != nil {
		when.during = func() { when.then(t, w) }
	}
	if when.marker {
		when.file = w.marker()
		t.Cleanup(func() { _ = os.Remove(when.file) })
	}
	r.when = &when
}

// marker is the file a row's hook makes to fire its trigger: beside the world, not in it, so
// that it is no change the run made.
func (w *world) marker() string { return w.root + ".marker" }

func (r *row) run(t *testing.T) {
	w := newWorld(t, r)
	if r.setup != nil {
		r.setup(t, w)
	}
	r.bind(t, w)
	args := r.args(w) // may write its inputs: before the snapshot
	before := snapshot(t, w.root)
	res := runProc(w.proc(r, args, true))
	after := snapshot(t, w.root)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, clip(res.stderr))
	r.check(t, w, res, before, after)
	if r.after != nil {
		r.after(t, w, res)
	}
	if r.repair {
		r.repairAfter(t, w, before, after)
	}
}

// repairAfter runs the row's command again, without its trigger or failpoint, on what the
// interrupted run left: it must bring the tree to the mode's postcondition — or, with
// --commit, report what the interrupted run left uncommitted (exit 1) and change nothing. It
// may remove what the interrupted run left behind (its work directory, temporary worktrees).
func (r *row) repairAfter(t *testing.T, w *world, before, after map[string]dirtree.Entry) {
	t.Helper()
	res := runProc(w.proc(r, r.args(w), false))
	t.Logf("repairing run: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, clip(res.stderr))
	repaired := *r
	repaired.when, repaired.want, repaired.swapMayComplete, repaired.leftBy = nil, exitOK, false, map[string]bool{}
	if r.mode == modeCommit && res.code == exitError {
		// A re-run may report what the interrupted one left uncommitted instead of committing
		// it (never "no changes"): its error names the files, the lock among them.
		repaired.want, repaired.names = exitError, []string{"lvms-rebase.lock.yaml"}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			repaired.leftBy[p] = true
		}
	}
	repaired.check(t, w, res, after, snapshot(t, w.root))
}

// check holds a finished run to the invariants every row shares.
func (r *row) check(t *testing.T, w *world, res result, before, after map[string]dirtree.Entry) {
	t.Helper()
	// Invariant 4: every process ends within its bound.
	if !res.ended {
		t.Fatalf("invariant 4: the process did not end within %s (killed)", bound)
	}
	if r.when != nil && !res.fired {
		t.Fatalf("the run never printed %q (exit %d)", r.when.at, res.code)
	}
	// Invariant 5: exit codes by type, one Error line naming the input.
	checkExit(t, r, res)
	// Invariant 2: nothing outside what the mode may change, changed.
	checkConfined(t, r, w, res, before, after)
	// Invariant 1: exit 0 means the mode's postcondition holds.
	if res.code == exitOK {
		checkDone(t, r, w, res)
	}
}

func checkExit(t *testing.T, r *row, res result) {
	t.Helper()
	if res.code != r.want {
		t.Errorf("invariant 5: exit %d, want %d", res.code, r.want)
	}
	switch {
	case res.code == exitSIGINT && (r.when == nil || r.when.sig != syscall.SIGINT),
		res.code == exitSIGTERM && (r.when == nil || r.when.sig != syscall.SIGTERM):
		t.Errorf("invariant 5: exit %d without that signal", res.code)
	}
	if res.code != exitError && res.code != exitUsage {
		return
	}
	var errs []string
	for _, line := range strings.Split(res.stderr, "\n") {
		if strings.HasPrefix(line, "Error: ") {
			errs = append(errs, line)
		}
	}
	if len(errs) != 1 {
		t.Errorf("invariant 5: %d lines start with \"Error: \", want one", len(errs))
		return
	}
	for _, name := range r.names {
		if !strings.Contains(errs[0], name) {
			t.Errorf("invariant 5: the error does not name %q:\n%s", name, errs[0])
		}
	}
}

// clip keeps a long stderr readable in the log.
func clip(s string) string {
	if len(s) > 8000 {
		return s[:4000] + fmt.Sprintf("\n… %d bytes …\n", len(s)-8000) + s[len(s)-4000:]
	}
	return s
}

// managed reports whether a path of the tree is one a rebase writes: the storage
// components, the release JSONs, the lock, the bundle record and the asset recipes.
// last_rebase.sh (MicroShift's own OCP rebase record) is never ours.
func managed(p string) bool {
	for _, dir := range []string{"assets/components/lvms/", "assets/components/csi-snapshot-controller/", "assets/components/topolvm/"} {
		if strings.HasPrefix(p, dir) || p+"/" == dir {
			return true
		}
	}
	if strings.HasPrefix(p, "assets/release/release-") && strings.HasSuffix(p, ".json") {
		return true
	}
	return slices.Contains([]string{
		"scripts/auto-rebase/lvms-rebase.lock.yaml", "scripts/auto-rebase/last_rebase_lvms.sh", "scripts/auto-rebase/last_lvms_rebase.sh",
		"scripts/auto-rebase/assets.yaml", "scripts/auto-rebase/assets_lvms.yaml", "scripts/auto-rebase/lvms_assets.yaml",
	}, p)
}

package attack

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// Paths of the 5.0 tree the rows attack.
const (
	lastRebase   = "scripts/auto-rebase/last_rebase.sh"
	bundleRecord = "scripts/auto-rebase/last_rebase_lvms.sh"
	releaseX86   = "assets/release/release-x86_64.json"
	recipeLVMS   = "scripts/auto-rebase/assets_lvms.yaml"
	operatorFile = "assets/components/lvms/lvms-operator_apps_v1_deployment.yaml"
)

// modes are the rebase's modes: the flag, what it promises, the exit code a first run on a
// fresh tree gives.
var modes = []struct {
	name string
	args []string
	mode mode
}{
	{"write", nil, modeWrite},
	{"dry-run", []string{"--dry-run"}, modeRead},
	{"diff", []string{"--diff"}, modeRead},
	{"check", []string{"--check"}, modeRead},
	{"commit", []string{"--commit"}, modeCommit},
	{"pr-body", []string{"--pr-body", "PRBODY"}, modeWrite},
}

// rebaseArgs is the mode's command line; PRBODY stands for the row's out/pr.md.
func rebaseArgs(w *world, mode []string, extra ...string) []string {
	var args []string
	for _, a := range append(append([]string{}, mode...), extra...) {
		args = append(args, strings.ReplaceAll(a, "PRBODY", filepath.Join(w.out, "pr.md")))
	}
	return w.rebase(args...)
}

// treeInput is a hostile form of one file of the tree, attacked in every mode.
type treeInput struct {
	name  string
	class class
	setup func(t *testing.T, w *world)
	names []string
}

// hostileTreeFiles are the tree's own files, each replaced by something that is not a
// regular file under the cap: every mode must refuse naming the file (exit 1), end, and
// change nothing.
var hostileTreeFiles = []treeInput{
	{"last_rebase.sh linked to /dev/zero", special, func(t *testing.T, w *world) { link(t, w.tree, lastRebase, "/dev/zero") }, []string{"last_rebase.sh"}},
	{"last_rebase.sh a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.tree, lastRebase) }, []string{"last_rebase.sh"}},
	{"last_rebase.sh a directory", special, func(t *testing.T, w *world) { directory(t, w.tree, lastRebase) }, []string{"last_rebase.sh"}},
	{"last_rebase.sh over the cap", huge, func(t *testing.T, w *world) { hugeFile(t, w.tree, lastRebase, "#!/bin/bash\n", overCap) }, []string{"last_rebase.sh"}},
	{"lock linked to /dev/zero", special, func(t *testing.T, w *world) { link(t, w.tree, lockPath, "/dev/zero") }, []string{"lvms-rebase.lock.yaml"}},
	{"lock a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.tree, lockPath) }, []string{"lvms-rebase.lock.yaml"}},
	{"lock over the cap", huge, func(t *testing.T, w *world) { hugeFile(t, w.tree, lockPath, "kind: RebaseLock\n", overCap) }, []string{"lvms-rebase.lock.yaml"}},
	{"release JSON linked out of the tree", special, func(t *testing.T, w *world) {
		victim := put(t, w.in, "victim.json", read(t, filepath.Join(w.tree, releaseX86)), 0o644)
		link(t, w.tree, releaseX86, victim)
	}, []string{"release-x86_64.json"}},
	{"release JSON a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.tree, releaseX86) }, []string{"release-x86_64.json"}},
	{"bundle record a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.tree, bundleRecord) }, []string{"last_rebase_lvms.sh"}},
	{"recipe a directory", special, func(t *testing.T, w *world) { directory(t, w.tree, recipeLVMS) }, []string{"assets_lvms.yaml"}},
	{"recipe over the cap", huge, func(t *testing.T, w *world) { hugeFile(t, w.tree, recipeLVMS, "assets:\n", overCap) }, []string{"assets_lvms.yaml"}},
	{"managed file linked out of the tree", special, func(t *testing.T, w *world) {
		victim := put(t, w.in, "victim.yaml", read(t, filepath.Join(w.tree, operatorFile)), 0o644)
		link(t, w.tree, operatorFile, victim)
	}, []string{operatorFile}},
	{"managed directory linked out of the tree", special, func(t *testing.T, w *world) {
		if err := os.Rename(filepath.Join(w.tree, "assets/components/lvms"), filepath.Join(w.in, "lvms")); err != nil {
			t.Fatal(err)
		}
		link(t, w.tree, "assets/components/lvms", filepath.Join(w.in, "lvms"))
	}, []string{"assets/components/lvms"}},
	{"second invocation through nohup", wrapped, func(t *testing.T, w *world) {
		appendTo(t, w, lastRebase, "nohup ./scripts/auto-rebase/rebase.sh to quay.io/a:1 quay.io/b:1\n")
	}, []string{"last_rebase.sh", "line 3"}},
	{"second invocation in an EXIT trap", wrapped, func(t *testing.T, w *world) {
		appendTo(t, w, lastRebase, "trap './scripts/auto-rebase/rebase.sh to quay.io/a:1 quay.io/b:1' EXIT\n")
	}, []string{"last_rebase.sh", "line 3"}},
	{"second invocation piped into bash", wrapped, func(t *testing.T, w *world) {
		appendTo(t, w, lastRebase, "echo './scripts/auto-rebase/rebase.sh to quay.io/a:1 quay.io/b:1' | bash\n")
	}, []string{"last_rebase.sh", "line 3"}},
	{"two invocations", duplicated, func(t *testing.T, w *world) {
		appendTo(t, w, lastRebase, read(t, filepath.Join(w.tree, lastRebase)))
	}, []string{"last_rebase.sh"}},
}

func appendTo(t *testing.T, w *world, rel, text string) {
	t.Helper()
	p := filepath.Join(w.tree, rel)
	put(t, w.tree, rel, read(t, p)+text, 0o755)
}

// TestRebaseHostileTree attacks each of the tree's files in every mode of the rebase.
func TestRebaseHostileTree(t *testing.T) {
	skipShort(t)
	var rows []row
	for _, in := range hostileTreeFiles {
		for _, m := range modes {
			rows = append(rows, row{
				name: m.name + "/" + string(in.class) + "/" + in.name, class: in.class, mode: m.mode, tpl: tplRebased,
				setup: in.setup, want: exitError, names: in.names,
				args: func(w *world) []string { return rebaseArgs(w, m.args) },
			})
		}
	}
	runRows(t, rows)
}

// TestRebaseModes runs every mode on the plain trees (the baseline the hostile rows are
// measured against) and on the hostile command-line inputs.
func TestRebaseModes(t *testing.T) {
	skipShort(t)
	var rows []row
	for _, m := range modes {
		first := exitOK
		if m.name == "diff" {
			first = exitDrift
		}
		if m.name == "check" {
			first = exitError // a tree that was never rebased has no lock
		}
		rows = append(rows,
			row{name: m.name + "/plain/fresh tree", class: plain, mode: m.mode, tpl: tplFresh, want: first,
				names: []string{"lvms-rebase.lock.yaml"}, args: func(w *world) []string { return rebaseArgs(w, m.args) }},
			row{name: m.name + "/plain/rebased tree", class: plain, mode: m.mode, tpl: tplRebased, want: exitOK,
				args: func(w *world) []string { return rebaseArgs(w, m.args) }},
		)
		extra := extraArchFile
		if m.name == "check" {
			extra.want = exitError
		}
		for _, in := range append(slices.Clip(hostileFlags), extra) {
			rows = append(rows, row{
				name: m.name + "/" + string(in.class) + "/" + in.name, class: in.class, mode: m.mode, tpl: tplRebased,
				setup: in.setup, want: in.want, names: in.names,
				args: func(w *world) []string { return rebaseArgs(w, m.args, in.args(w)...) },
			})
		}
	}
	runRows(t, rows)
}

// flagInput is a hostile value of a command-line input of the rebase.
type flagInput struct {
	name  string
	class class
	setup func(t *testing.T, w *world)
	args  func(w *world) []string
	want  int
	names []string
}

func in(w *world, rel string) string { return filepath.Join(w.in, rel) }

var hostileFlags = []flagInput{
	{"--microshift-dir absent", absent, nil, func(w *world) []string { return []string{"--microshift-dir", in(w, "missing")} }, exitError, []string{"--microshift-dir", "missing"}},
	{"--microshift-dir a file", special, func(t *testing.T, w *world) { put(t, w.in, "file", "x\n", 0o644) }, func(w *world) []string {
		return []string{"--microshift-dir", in(w, "file")}
	}, exitError, []string{"--microshift-dir", "file"}},
	// The error of a broken tree names the directory; the exit code must not depend on the
	// text ("accepts " once made it a usage error).
	{"--microshift-dir named like a usage error, its recipe broken", colliding, func(t *testing.T, w *world) {
		dir := in(w, "dir accepts x")
		if err := cp(w.tree, dir); err != nil {
			t.Fatal(err)
		}
		put(t, dir, recipeLVMS, "assets: [\n", 0o644)
	}, func(w *world) []string { return []string{"--microshift-dir", in(w, "dir accepts x")} }, exitError, []string{"dir accepts x", "assets_lvms.yaml"}},
	{"--authfile absent", absent, nil, func(w *world) []string { return []string{"--authfile", in(w, "auth.json")} }, exitError, []string{"auth.json"}},
	{"--authfile a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.in, "auth.json") }, func(w *world) []string {
		return []string{"--authfile", in(w, "auth.json")}
	}, exitError, []string{"auth.json"}},
	{"--authfile linked to /dev/zero", special, func(t *testing.T, w *world) { link(t, w.in, "auth.json", "/dev/zero") }, func(w *world) []string {
		return []string{"--authfile", in(w, "auth.json")}
	}, exitError, []string{"auth.json"}},
	{"--idms-file a FIFO", special, func(t *testing.T, w *world) { fifo(t, w.in, "idms.yaml") }, func(w *world) []string {
		return []string{"--idms-file", in(w, "idms.yaml")}
	}, exitError, []string{"idms.yaml"}},
	{"--idms-file over the cap", huge, func(t *testing.T, w *world) {
		hugeFile(t, w.in, "idms.yaml", "kind: ImageDigestMirrorSet\n", overCap)
	}, func(w *world) []string { return []string{"--idms-file", in(w, "idms.yaml")} }, exitError, []string{"idms.yaml"}},
	{"--cache-dir a file", special, func(t *testing.T, w *world) { put(t, w.in, "cache", "x\n", 0o644) }, func(w *world) []string {
		return []string{"--cache-dir", in(w, "cache")}
	}, exitError, []string{"cache"}},
	{"--arch duplicated", duplicated, nil, func(*world) []string { return []string{"--arch", "x86_64,aarch64,x86_64"} }, exitOK, nil},
	{"--arch fewer than the tree's release JSONs", colliding, nil, func(*world) []string { return []string{"--arch", "x86_64"} }, exitUsage, []string{"--arch", "x86_64"}},
	// The release JSON left out is only looked at (lstat), never opened: a FIFO or a link to a
	// device in its place is named at once.
	{"--arch fewer, the one left out a FIFO", special, func(t *testing.T, w *world) {
		fifo(t, w.tree, "assets/release/release-aarch64.json")
	}, func(*world) []string { return []string{"--arch", "x86_64"} }, exitUsage, []string{"--arch", "x86_64"}},
	{"--arch fewer, the one left out linked to /dev/zero", special, func(t *testing.T, w *world) {
		link(t, w.tree, "assets/release/release-aarch64.json", "/dev/zero")
	}, func(*world) []string { return []string{"--arch", "x86_64"} }, exitUsage, []string{"--arch", "x86_64"}},
}

// extraArchFile is a third arch's release JSON in the tree: the default arches leave it behind,
// which is the caller's to fix with --arch (exit 2); under --check the lock does not cover the
// tree, an error of the tree (exit 1).
var extraArchFile = flagInput{"a third arch's release JSON in the tree", colliding, func(t *testing.T, w *world) {
	put(t, w.tree, "assets/release/release-ppc64le.json", `{"release":{"base":"4.18.0"},"images":{}}`+"\n", 0o644)
}, func(*world) []string { return nil }, exitUsage, []string{"release-ppc64le.json"}}

// TestRebaseSignals interrupts real runs: in the fetch (a registry that stalls) and at each
// kind of point of the swap (failpoints), by SIGINT, SIGTERM and SIGKILL.
func TestRebaseSignals(t *testing.T) {
	skipShort(t)
	stall := []testregistry.Fault{{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStall}}
	var rows []row
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		for _, m := range modes {
			tpl := tplFresh
			if m.name == "check" {
				tpl = tplRebased
			}
			rows = append(rows, row{
				name: m.name + "/killed/" + s.sig.String() + " while fetching", class: killed, mode: m.mode, tpl: tpl, faults: stall, cold: true,
				// logfmt (the format scripts read) names the step's start as the trigger waits for it.
				args: func(w *world) []string { return rebaseArgs(w, m.args, "-v", "1", "--log-format", "text") },
				when: &trigger{at: `msg="phase resolve"`, delay: 300e6, sig: s.sig}, want: s.code,
			})
		}
		for _, step := range []string{"stage ", "journaled", "place ", "committed"} {
			for _, m := range []int{0, 4} { // write, commit
				rows = append(rows, row{
					name: modes[m].name + "/killed/" + s.sig.String() + " at " + step, class: killed, mode: modes[m].mode, tpl: tplFresh,
					env:  []string{"LVMS_REBASE_PAUSE_AT=" + step},
					args: func(w *world) []string { return rebaseArgs(w, modes[m].args) }, when: &trigger{at: "failpoint: paused at " + step, sig: s.sig},
					want: s.code, swapMayComplete: step != "stage ", repair: true,
				})
			}
		}
	}
	for _, step := range []string{"stage ", "backup ", "place ", "committed"} {
		rows = append(rows, row{
			name: "write/killed/SIGKILL at " + step, class: killed, mode: modeWrite, tpl: tplFresh, env: []string{"LVMS_REBASE_PAUSE_AT=" + step},
			args: func(w *world) []string { return w.rebase() }, when: &trigger{at: "failpoint: paused at " + step, sig: syscall.SIGKILL},
			want: 128 + int(syscall.SIGKILL), repair: true,
		})
	}
	runRows(t, rows)
}

// TestRebaseConcurrent starts a second run of each mode on the tree while a write holds it,
// paused in its swap: the second is refused naming the tree and changes nothing; the first,
// stopped by SIGTERM, completes its swap and the next run finds the tree current.
func TestRebaseConcurrent(t *testing.T) {
	skipShort(t)
	var rows []row
	for _, m := range modes {
		rows = append(rows, row{
			name: m.name + "/concurrent/while a write is in its swap", class: concurrent, mode: modeWrite, tpl: tplFresh,
			env:  []string{"LVMS_REBASE_PAUSE_AT=journaled"},
			args: func(w *world) []string { return w.rebase() },
			when: &trigger{at: "failpoint: paused at journaled", sig: syscall.SIGTERM, then: func(t *testing.T, w *world) {
				second := &row{name: "second " + m.name, class: concurrent, mode: m.mode, want: exitError, names: []string{w.tree},
					args: func(w *world) []string { return rebaseArgs(w, m.args) }}
				before := snapshot(t, w.root)
				res := runProc(proc{args: second.args(w), env: childEnv(w.home), dir: w.root})
				t.Logf("second run (%s): exit %d\n%s", m.name, res.code, clip(res.stderr))
				second.check(t, w, res, before, snapshot(t, w.root))
			}},
			want: exitSIGTERM, swapMayComplete: true, repair: true,
		})
	}
	runRows(t, rows)
}

package attack

import (
	"strings"
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// outdated is `outdated -o json` on the row's clone.
func outdated(w *world, extra ...string) []string {
	return w.command("outdated", append([]string{"--microshift-dir", w.tree, "-o", "json"}, extra...)...)
}

// TestOutdated attacks outdated: a clone with no local branch (CI), names that are no branch,
// a branch whose record is hostile among good ones, pins it cannot honour, signals.
func TestOutdated(t *testing.T) {
	skipShort(t)
	stall := []testregistry.Fault{{Method: "GET", Path: "/tags/list", Kind: testregistry.FaultStall}}
	rows := []row{
		{name: "plain/one branch", class: plain, args: func(w *world) []string { return outdated(w, "--branches", "main") }, want: exitDrift},
		{name: "plain/default branches", class: plain, args: func(w *world) []string { return outdated(w) }, want: exitDrift},
		{name: "empty/a CI clone: detached HEAD, only origin/*", class: empty, setup: ciClone,
			args: func(w *world) []string { return outdated(w) }, want: exitError, names: []string{"origin/main"}},
		{name: "absent/a CI clone, a branch only as origin/*", class: absent, setup: ciClone,
			args: func(w *world) []string { return outdated(w, "--branches", "main") }, want: exitError, names: []string{"main"}},
		{name: "empty/--branches \"\" in a CI clone", class: empty, setup: ciClone,
			args: func(w *world) []string { return outdated(w, "--branches", "") }, want: exitUsage, names: []string{"--branches"}},
		{name: "absent/no such branch among good ones", class: absent,
			args: func(w *world) []string { return outdated(w, "--branches", "nosuch,main") }, want: exitError, names: []string{"nosuch"}},
		{name: "absent/a revision, not a branch", class: absent,
			args: func(w *world) []string { return outdated(w, "--branches", "main~1") }, want: exitUsage, names: []string{"main~1"}},
		{name: "special/a record linked to /dev/zero in one branch", class: special,
			setup: func(t *testing.T, w *world) {
				commitOn(t, w, "release-4.22", lastRebase, "", func() { link(t, w.tree, lastRebase, "/dev/zero") })
			},
			args: func(w *world) []string { return outdated(w, "--branches", "release-4.22,main") }, want: exitError, names: []string{"release-4.22"}},
		{name: "huge/a record a million subshells deep in one branch", class: huge,
			setup: func(t *testing.T, w *world) {
				commitOn(t, w, "release-4.22", lastRebase, strings.Repeat("(", 1_000_000)+"\n", nil)
			},
			args: func(w *world) []string { return outdated(w, "--branches", "release-4.22,main") }, want: exitError, names: []string{"release-4.22"}},
		{name: "wrapped/a second invocation through env in one branch", class: wrapped,
			setup: func(t *testing.T, w *world) {
				gitT(t, w.tree, "checkout", "-q", "release-4.22")
				data := read(t, w.tree+"/"+lastRebase)
				gitT(t, w.tree, "checkout", "-q", "main")
				commitOn(t, w, "release-4.22", lastRebase, data+"env ./scripts/auto-rebase/rebase.sh to quay.io/a:1 quay.io/b:1\n", nil)
			},
			args: func(w *world) []string { return outdated(w, "--branches", "release-4.22,main") }, want: exitError, names: []string{"release-4.22"}},
		{name: "colliding/--lvms-bundle pins a bundle outdated cannot honour", class: colliding,
			args: func(w *world) []string {
				return outdated(w, "--branches", "main", "--lvms-bundle", "registry.redhat.io/lvms4/lvms-operator-bundle:v4.21.1-4")
			}, want: exitUsage, names: []string{"--lvms-bundle"}},
		{name: "colliding/--ocp-release pins a payload outdated cannot honour", class: colliding,
			args: func(w *world) []string {
				return outdated(w, "--branches", "main", "--ocp-release", "quay.io/openshift-release-dev/ocp-release:4.18.10-{arch}")
			}, want: exitUsage, names: []string{"--ocp-release"}},
	}
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		rows = append(rows, row{name: "killed/" + s.sig.String() + " while listing tags", class: killed, faults: stall, cold: true,
			args: func(w *world) []string { return outdated(w, "--branches", "main", "-v", "7") }, // -v 7 logs a request before it is sent
			when: &trigger{at: "tags/list", delay: 300e6, sig: s.sig}, want: s.code})
	}
	for i := range rows {
		rows[i].mode, rows[i].tpl = modeRead, tplClone
	}
	runRows(t, rows)
}

// ciClone turns the clone into what a CI job checks out: HEAD detached, the branches only as
// origin/*.
func ciClone(t *testing.T, w *world) {
	gitT(t, w.tree, "checkout", "-q", "--detach", "main")
	for _, b := range []string{"main", "release-4.22", "release-4.17"} {
		gitT(t, w.tree, "update-ref", "refs/remotes/origin/"+b, "refs/heads/"+b)
		gitT(t, w.tree, "branch", "-q", "-D", b)
	}
}

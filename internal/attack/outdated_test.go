package attack

import (
	"strings"
	"testing"
)

// outdated is `outdated -o json` on the row's clone.
func outdated(w *world, extra ...string) []string {
	return w.command("outdated", append([]string{"--microshift-dir", w.tree, "-o", "json"}, extra...)...)
}

// TestOutdated attacks outdated: a clone with no local branch (CI), names that are no branch,
// a branch whose record is hostile among good ones, pins it cannot honour, signals.
func TestOutdated(t *testing.T) {
	skipShort(t)
	rows := []row{
		{name: "plain/one branch", class: plain, args: func(w *world) []string { return outdated(w, "--branches", "main") }, want: exitDrift},
		{name: "plain/default branches", class: plain, args: func(w *world) []string { return outdated(w) }, want: exitDrift},
		{name: "absent/no such branch among good ones", class: absent,
			args: func(w *world) []string { return outdated(w, "--branches", "nosuch,main") }, want: exitError, names: []string{"nosuch"}},
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
	}
	for i := range rows {
		rows[i].mode, rows[i].tpl = modeRead, tplClone
	}
	runRows(t, rows)
}

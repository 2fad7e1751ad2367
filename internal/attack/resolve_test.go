package attack

import (
	"syscall"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

const bundleTags = "/registry.redhat.io/lvms4/lvms-operator-bundle/tags/list"

// TestResolve attacks resolve — the network side every command shares: a registry whose
// answers never end (self-linking and endless tag pages, a gigabyte page), that stalls, and
// hostile local inputs (an OCI layout that is a FIFO).
func TestResolve(t *testing.T) {
	skipShort(t)
	resolve := func(extra ...string) func(w *world) []string {
		return func(w *world) []string {
			return w.command("resolve", append([]string{"--ocp", "4.18", "--timeout", "2m"}, extra...)...)
		}
	}
	hostile := func(f testregistry.Fault) []testregistry.Fault { return []testregistry.Fault{f} }
	rows := []row{
		{name: "plain/4.18", class: plain, args: resolve(), want: exitOK},
		{name: "huge/tags/list linking to itself", class: huge, faults: hostile(testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultSelfLink}),
			cold: true, args: resolve(), want: exitError, names: []string{"lvms-operator-bundle"}},
		{name: "huge/endless tags/list pages", class: huge, faults: hostile(testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultEndlessPages}),
			cold: true, args: resolve(), want: exitError, names: []string{"lvms-operator-bundle"}},
		{name: "huge/a 1 GiB tag list page", class: huge, faults: hostile(testregistry.Fault{Path: bundleTags, Kind: testregistry.FaultHugeTagList, Size: 1 << 30}),
			cold: true, args: resolve(), want: exitError, names: []string{"lvms-operator-bundle"}},
		{name: "huge/1 GiB manifests not what their digest says", class: huge,
			faults: hostile(testregistry.Fault{Path: "/manifests/sha256:", Kind: testregistry.FaultWrongDigest, Size: 1 << 30}),
			cold:   true, args: resolve(), want: exitError, names: []string{"manifest"}},
		{name: "special/--lvms-bundle an OCI layout that is a FIFO", class: special,
			setup: func(t *testing.T, w *world) { fifo(t, w.in, "layout") },
			args:  func(w *world) []string { return resolve("--lvms-bundle", "oci:"+in(w, "layout"))(w) }, want: exitError, names: []string{"layout"}},
		{name: "special/--authfile a FIFO", class: special, setup: func(t *testing.T, w *world) { fifo(t, w.in, "auth.json") },
			// A file a flag names that cannot be used is bad input, exit 1 (README "Exit codes").
			args: func(w *world) []string { return resolve("--authfile", in(w, "auth.json"))(w) }, want: exitError, names: []string{"auth.json"}},
		{name: "special/REGISTRY_AUTH_FILE linked to /dev/zero", class: special, setup: func(t *testing.T, w *world) { link(t, w.in, "auth.json", "/dev/zero") },
			env: []string{"REGISTRY_AUTH_FILE=IN/auth.json"}, args: resolve(), want: exitError, names: []string{"auth.json"}},
	}
	for _, s := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		rows = append(rows, row{name: "killed/" + s.sig.String() + " while the registry stalls", class: killed,
			faults: hostile(testregistry.Fault{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStall}), cold: true,
			// -v 7 logs each request as it is sent (kubectl's levels: URLs with their status at 6).
			args: resolve("-v", "7"), when: &trigger{at: "/blobs/", delay: 300e6, sig: s.sig}, want: s.code})
	}
	for i := range rows {
		rows[i].mode = modeRead
	}
	runRows(t, rows)
}

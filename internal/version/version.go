// Package version says which build of lvms-rebase is running: the version stamped at link time
// by `make build`, else what the Go toolchain recorded in the binary (runtime/debug.ReadBuildInfo:
// the main module's version, and the VCS revision a build in a git checkout records).
package version

import (
	"runtime/debug"
	"strings"
)

// Version is set at link time with
// -ldflags "-X github.com/lvms-rebase/lvms-rebase/internal/version.Version=$(git describe)".
// It stays "dev" for plain `go build`, `go install` and `go test`; String then reads the build
// info.
var Version = "dev"

// unstamped is Version when the linker did not set it.
const unstamped = "dev"

// Info is what a binary knows about its build.
type Info struct {
	// Version is the stamped version, else the main module's (v1.2.3 for `go install
	// …@v1.2.3`, a pseudo-version for a build in a git checkout), else "dev".
	Version string
	// Revision is the VCS commit the binary was built from and Modified whether the work tree
	// had uncommitted changes; empty and false when the toolchain recorded none (go test,
	// -buildvcs=false, a build outside a checkout).
	Revision string
	Modified bool
}

// Get returns the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(Version, bi)
}

// fromBuildInfo is Get for a stamped version and build info (nil when there is none).
func fromBuildInfo(stamped string, bi *debug.BuildInfo) Info {
	info := Info{Version: stamped}
	if bi == nil {
		return info
	}
	if v := bi.Main.Version; stamped == unstamped && v != "" && v != "(devel)" {
		info.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the version as `lvms-rebase version` prints it and the lock file records it:
// "v1.2.3", or "dev (revision 0123abcd…, modified)" for an unstamped build of a checkout.
func (i Info) String() string {
	if i.Revision == "" || strings.Contains(i.Version, shortRevision(i.Revision)) {
		return i.Version
	}
	s := i.Version + " (revision " + i.Revision
	if i.Modified {
		s += ", modified"
	}
	return s + ")"
}

// shortRevision is the 12-character prefix Go's pseudo-versions carry.
func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// String is Get().String().
func String() string { return Get().String() }

package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    Info
		str     string
	}{
		{"no build info", "dev", nil, Info{Version: "dev"}, "dev"},
		{"stamped wins", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}, Settings: vcs(rev, "false")},
			Info{Version: "v1.4.0", Revision: rev}, "v1.4.0 (revision " + rev + ")"},
		{"go install module@version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}},
			Info{Version: "v1.3.0"}, "v1.3.0"},
		{"go test: devel, no vcs", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Info{Version: "dev"}, "dev"},
		{"checkout build with -buildvcs", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")},
			Info{Version: "dev", Revision: rev, Modified: true}, "dev (revision " + rev + ", modified)"},
		{"pseudo-version names the revision", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126005400-0123456789ab+dirty"}, Settings: vcs(rev, "true")},
			Info{Version: "v0.0.0-20261126005400-0123456789ab+dirty", Revision: rev, Modified: true}, "v0.0.0-20261126005400-0123456789ab+dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromBuildInfo(tc.stamped, tc.bi)
			if got != tc.want || got.String() != tc.str {
				t.Errorf("got %+v %q, want %+v %q", got, got.String(), tc.want, tc.str)
			}
		})
	}
}

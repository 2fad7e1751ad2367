package era

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// minorRE is a strict "X.Y": decimal numbers without sign, leading zeros, "v", patch or
// pre-release.
var minorRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$`)

// ParseMinor checks that s is an OpenShift or LVMS minor written strictly as X.Y ("4.18").
// "4", "4.17.3", "v4.17" and "04.17" are refused rather than read as something else; what
// names the flag is the caller's job (it knows whether this is --ocp or --lvms).
func ParseMinor(s string) (string, error) {
	if !minorRE.MatchString(s) {
		return "", fmt.Errorf("%q: expected X.Y (e.g. 4.18; no \"v\", patch, pre-release or leading zero)", s)
	}
	return s, nil
}

// VersionMinor returns the minor "X.Y" of an OpenShift version written strictly: semantic
// version X.Y.Z with an optional pre-release and build (a GA "4.18.12", a nightly
// "5.0.0-0.nightly-2026-07-23-224236"), whose X.Y is what ParseMinor accepts for --ocp. "5",
// "5.0", "v5.0.0" and "05.0.1" are refused rather than read as something else; naming the
// file and field is the caller's job.
func VersionMinor(v string) (string, error) {
	if _, err := semver.StrictNewVersion(v); err != nil {
		return "", fmt.Errorf("%q: expected an OpenShift version X.Y.Z or X.Y.Z-<pre-release> (e.g. 4.18.12, 5.0.0-0.nightly-…; no \"v\" or leading zero): %w", v, err)
	}
	x, rest, _ := strings.Cut(v, ".")
	y, _, _ := strings.Cut(rest, ".")
	return ParseMinor(x + "." + y)
}

// MinorOf returns the "X.Y" of an OpenShift version: a GA "4.18.12", a nightly
// "5.0.0-0.nightly-2026-07-23-224236" or "5.0.0-0.nightly-arm64-…", or "X.Y" itself.
func MinorOf(version string) (string, error) {
	v, err := semver.NewVersion(strings.TrimSpace(version))
	if err != nil {
		return "", fmt.Errorf("OpenShift version %q: expected X.Y, X.Y.Z or X.Y.Z-<pre-release>: %w", version, err)
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor()), nil
}

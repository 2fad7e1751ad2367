package era

import (
	"fmt"
	"regexp"
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

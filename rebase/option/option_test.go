package option

import (
	"errors"
	"testing"
)

// TestError: an option error reads with the option as the installed Namer spells it, and a
// caller finds the option with errors.As through wrapping.
func TestError(t *testing.T) {
	err := Errorf(OCP, "%q: expected X.Y", "4")
	wrapped := errors.Join(errors.New("run"), err)
	for _, tc := range []struct {
		namer Namer
		want  string
	}{
		{nil, `OCP "4": expected X.Y`},
		{func(n Name) string { return "--" + map[Name]string{OCP: "ocp"}[n] }, `--ocp "4": expected X.Y`},
	} {
		SetNamer(tc.namer)
		if got := err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	SetNamer(nil)
	var oe *Error
	if !errors.As(wrapped, &oe) || oe.Option != OCP {
		t.Errorf("errors.As: %v", oe)
	}
}

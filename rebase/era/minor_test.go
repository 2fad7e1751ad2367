package era

import "testing"

func TestParseMinor(t *testing.T) {
	for _, good := range []string{"4.18", "4.0", "5.10", "10.2"} {
		if _, err := ParseMinor(good); err != nil {
			t.Errorf("ParseMinor(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"", "4", "4.", ".4", "4.17.3", "v4.17", "04.17", "4.017", "4.17-rc", " 4.17", "4.17 ", "4.x", "+4.17", "4.1e1", "４.17"} {
		if _, err := ParseMinor(bad); err == nil {
			t.Errorf("ParseMinor(%q) accepted", bad)
		}
	}
}

func TestVersionMinor(t *testing.T) {
	for in, want := range map[string]string{
		"4.18.12": "4.18", "5.0.0-0.nightly-2026-07-23-224236": "5.0", "4.18.0-0.nightly-arm64-2026-08-12-180320": "4.18",
		"4.22.0-ec.2": "4.22", "4.18.12+build.1": "4.18", "10.2.0": "10.2",
	} {
		if got, err := VersionMinor(in); err != nil || got != want {
			t.Errorf("VersionMinor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "5", "5.0", "v5.0.0", "05.0.1", "5.00.1", "5.0.01", "5.0.0-01", " 5.0.0", "5.0.0 ", "latest", "12345.0.0"} {
		if got, err := VersionMinor(bad); err == nil {
			t.Errorf("VersionMinor(%q) = %q, accepted", bad, got)
		}
	}
}

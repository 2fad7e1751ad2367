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

package lvmd

import (
	"slices"
	"testing"
)

func TestParseLVS(t *testing.T) {
	out := "  rhel,root,-wi-ao----\n  rhel,thinpool,twi-aotz--\n  data,pool2,twi---tz--\n  rhel,thinvol,Vwi-aotz--\n"
	got := parseLVS(out)
	want := []ThinPool{{"rhel", "thinpool"}, {"data", "pool2"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parseLVS = %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want []Problem
	}{
		{"valid", map[string]any{"socket-name": "/s", "device-classes": []any{map[string]any{"name": "a", "spare-gb": float64(1)}}}, nil},
		{"types and unknown keys, with list index", map[string]any{
			"socket-name": true, "colour": "red",
			"device-classes": []any{nil, map[string]any{"spare-gb": float64(-1), "thin-pool": map[string]any{"size": "1"}}},
		}, []Problem{
			{"socket-name", "expected a string, got boolean true"},
			{"device-classes[1].spare-gb", "-1 must be an integer >= 0"},
			{"device-classes[1].thin-pool.size", "unknown field (allowed: name, overprovision-ratio)"},
			{"colour", "unknown field (allowed: socket-name, device-classes, lvcreate-option-classes, lvm-command-prefix)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Check(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Check = %q\nwant    %q", got, tc.want)
			}
		})
	}
}

func TestFields(t *testing.T) {
	if got, want := Fields("device-classes", "thin-pool"), []string{"name", "overprovision-ratio"}; !slices.Equal(got, want) {
		t.Errorf("Fields(device-classes, thin-pool) = %v, want %v", got, want)
	}
	if got := Fields("nope"); got != nil {
		t.Errorf("Fields(nope) = %v, want nil", got)
	}
}

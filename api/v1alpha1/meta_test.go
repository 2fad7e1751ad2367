package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDurationJSON(t *testing.T) {
	for _, d := range []time.Duration{0, time.Microsecond, 1503 * time.Millisecond, 12400 * time.Microsecond, 90 * time.Minute} {
		b, err := json.Marshal(Phase{Name: "x", Duration: Duration{d}})
		if err != nil {
			t.Fatal(err)
		}
		var p Phase
		if err := json.Unmarshal(b, &p); err != nil || p.Duration.Duration != d || !strings.Contains(string(b), `"duration":"`+d.String()+`"`) {
			t.Errorf("%v: %s read back as %v (%v)", d, b, p.Duration, err)
		}
	}
	p := Phase{Duration: Duration{time.Second}}
	if err := json.Unmarshal([]byte(`{"duration":null}`), &p); err != nil || p.Duration.Duration != time.Second {
		t.Errorf("null: %v, %v", p.Duration, err)
	}
	// Before v1alpha1, durations were integers of nanoseconds: refused, never misread.
	for _, in := range []string{`1503000000`, `"1503000000"`, `"abc"`, `""`, `{}`, `true`} {
		if err := json.Unmarshal([]byte(`{"duration":`+in+`}`), &p); err == nil || !strings.Contains(err.Error(), "duration") {
			t.Errorf("duration %s: %v", in, err)
		}
	}
}

func TestKindsAndMeta(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if k == "" || seen[k] {
			t.Errorf("kind %q empty or twice", k)
		}
		seen[k] = true
		if m := Meta(k); m.APIVersion != "lvms-rebase.microshift.io/v1alpha1" || m.Kind != k {
			t.Errorf("Meta(%s) = %+v", k, m)
		}
	}
}

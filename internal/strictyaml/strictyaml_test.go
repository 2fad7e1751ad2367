package strictyaml

import (
	"strings"
	"testing"
)

type inner struct {
	Commit string `json:"commit"`
}

type doc struct {
	Name  string  `json:"name"`
	Inner inner   `json:"inner"`
	List  []inner `json:"list"`
	Count int     `json:"count"`
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    doc
		wantErr []string
	}{
		{name: "valid", in: "name: a\ninner: {commit: c}\nlist: [{commit: d}]\ncount: 3\n",
			want: doc{Name: "a", Inner: inner{Commit: "c"}, List: []inner{{Commit: "d"}}, Count: 3}},
		{name: "unknown top-level field", in: "name: a\nextra: 1\n", wantErr: []string{`extra: unknown field "extra"`}},
		{name: "unknown nested field", in: "inner: {comit: c}\n", wantErr: []string{`inner.comit: unknown field "comit"`}},
		{name: "unknown field in a list", in: "list: [{commit: c}, {comit: d}]\n", wantErr: []string{`list[1].comit: unknown field "comit"`}},
		{name: "every unknown field", in: "x: 1\ninner: {z: 2}\n", wantErr: []string{`x: unknown field "x"`, `inner.z: unknown field "z"`}},
		{name: "field names are case-sensitive", in: "Name: a\n", wantErr: []string{`Name: unknown field "Name"`}},
		{name: "duplicate key", in: "name: a\nname: b\n", wantErr: []string{"converting YAML to JSON", `"name" already set`}},
		{name: "wrong type", in: "count: many\n", wantErr: []string{"error unmarshaling JSON", "count"}},
		{name: "syntax", in: "name: [\n", wantErr: []string{"converting YAML to JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got doc
			err := Unmarshal([]byte(tc.in), &got)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got.Name != tc.want.Name || got.Inner != tc.want.Inner || got.Count != tc.want.Count || len(got.List) != len(tc.want.List) {
					t.Errorf("got %+v, want %+v", got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestNotUTF8: a byte that is not UTF-8, a Latin-1 comment say, is named with its line (the
// YAML libraries name no line for it).
func TestNotUTF8(t *testing.T) {
	data := []byte("commit: abc\n# r\xe9vis\xe9\n")
	var d doc
	for name, err := range map[string]error{"UTF8": UTF8(data), "Unmarshal": Unmarshal(data, &d)} {
		if err == nil || !strings.Contains(err.Error(), "line 2: byte 0xe9 is not UTF-8") {
			t.Errorf("%s: %v, want the line and the byte named", name, err)
		}
	}
	if err := UTF8([]byte("caf\u00e9: \u2713\n")); err != nil {
		t.Errorf("UTF-8 text refused: %v", err)
	}
}

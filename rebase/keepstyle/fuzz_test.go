package keepstyle

import "testing"

// FuzzApply holds Apply's contract on any pair of files: no panic, the result means what
// want means whenever want parses, and applying it again changes nothing.
func FuzzApply(f *testing.F) {
	for _, seed := range [][2]string{
		{"kind: A\n\nspec:\n  v: 1\n", "kind: A\nspec:\n  v: 2\n  w: 3\n"},
		{"a: &x {b: 1}\nc: *x\n", "a: {b: 2}\nc: {b: 1}\n"},
		{"{\r\n  \"a\": [1, 2]\r\n}", "a: [1, 3]\n"},
		{"base: &b\n  a: 1\nx:\n  <<: *b\n  c: 3\n", "base: {a: 1}\nx: {c: 4}\n"},
		{"---\nk: 'v' # c\n...\n---\nl: [a,\n  b]\n", "k: w\n---\nl: [a, c]\n"},
		{"a:      1\r\nb:\n- x\r\n", "a: 1\nb: [x, y]\n"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, current, want string) {
		if len(current)+len(want) > 1<<14 {
			return
		}
		got := Apply([]byte(current), []byte(want))
		if !Equal([]byte(want), []byte(want)) {
			return // want does not parse: nothing to mean
		}
		if !Equal(got, []byte(want)) {
			t.Fatalf("Apply(%q, %q) = %q: another meaning", current, want, got)
		}
		if again := Apply(got, []byte(want)); string(again) != string(got) {
			t.Fatalf("Apply twice: %q then %q", got, again)
		}
	})
}

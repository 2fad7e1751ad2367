package funclen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModule fails when a product function in the root module is over the limit, so `make
// test` enforces the rule as `make verify` does.
func TestModule(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found, err := Check(root, Options{Max: Limit, Exclude: RootExcluded})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s (limit %d): split it", f, Limit)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	long := "package p\n\nfunc Long() {\n" + strings.Repeat("\t_ = 1\n", 9) + "}\n\n" +
		"type T struct{}\n\nfunc (t *T) Method() {\n" + strings.Repeat("\t_ = 1\n", 9) + "}\n\n" +
		"func Short() {\n\t_ = 1\n}\n"
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module m\n")
	write("a/a.go", long)
	write("a/a_test.go", long)        // tests are not product code
	write("gen/g.go", long)           // excluded
	write("a/testdata/t.go", long)    // not a package the go tool builds
	write("sub/go.mod", "module s\n") // a nested module is checked on its own
	write("sub/s.go", long)

	tests := []struct {
		name    string
		root    string
		exclude []string
		want    []string
	}{
		{"root module", dir, []string{"gen"}, []string{"a/a.go:3: Long is 11 lines", "a/a.go:17: (T).Method is 11 lines"}},
		{"without exclusions", dir, nil, []string{"a/a.go:3: Long is 11 lines", "a/a.go:17: (T).Method is 11 lines", "gen/g.go:3: Long is 11 lines", "gen/g.go:17: (T).Method is 11 lines"}},
		{"nested module as root", filepath.Join(dir, "sub"), nil, []string{"s.go:3: Long is 11 lines", "s.go:17: (T).Method is 11 lines"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			found, err := Check(tc.root, Options{Max: 10, Exclude: tc.exclude})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range found {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestRebasePhases holds the rebase runner's phase methods to the preferred 60 lines: each
// is one unit a reader takes in at once. A phase method that is renamed or gone fails too,
// so the test cannot pass by no longer finding them.
func TestRebasePhases(t *testing.T) {
	phases := []string{"resolve", "fetchBundle", "fetchPayloads", "snapshotAssets", "translate", "images", "render", "write"}
	root, err := filepath.Abs("../../rebase")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var subpackages []string
	for _, e := range entries {
		if e.IsDir() {
			subpackages = append(subpackages, e.Name())
		}
	}
	// Max 0 lists every function of package rebase with its length.
	all, err := Check(root, Options{Max: 0, Exclude: subpackages})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]Finding{}
	for _, f := range all {
		lines[f.Func] = f
	}
	for _, p := range phases {
		f, ok := lines["(runner)."+p]
		switch {
		case !ok:
			t.Errorf("phase method (runner).%s not found in package rebase", p)
		case f.Lines > 60:
			t.Errorf("phase method %s (limit 60): split it", f)
		}
	}
}

// TestApplierModule holds the applier module (checked as a module of its own, no exclusions)
// to the same 80-line limit, and its preparation steps to the preferred 60: each step of
// applier.prepare is one unit, named as its debug log line reports it. A step method that is
// renamed or gone fails too.
func TestApplierModule(t *testing.T) {
	root, err := filepath.Abs("../../applier")
	if err != nil {
		t.Fatal(err)
	}
	all, err := Check(root, Options{Max: 0})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]Finding{}
	for _, f := range all {
		lines[f.Func] = f
		if f.Lines > Limit {
			t.Errorf("%s (limit %d): split it", f, Limit)
		}
	}
	steps := []string{"readAssets", "identifyEra", "gates", "lvmd", "resolveImages", "renderAssets", "schedule", "prepareLvmd", "useLvmd"}
	for _, s := range append(steps, "prepare") {
		name := "(preparation)." + s
		if s == "prepare" {
			name = s
		}
		f, ok := lines[name]
		switch {
		case !ok:
			t.Errorf("%s not found in the applier module", name)
		case f.Lines > 60:
			t.Errorf("preparation step %s (limit 60): split it", f)
		}
	}
}

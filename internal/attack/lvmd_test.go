package attack

import (
	"testing"
)

// TestLvmdCheckAndVersion attacks `lvmd check FILE` (the file in every form a person can give
// it) and `version`, the two commands that read no registry.
func TestLvmdCheckAndVersion(t *testing.T) {
	skipShort(t)
	check := func(extra ...string) func(w *world) []string {
		return func(w *world) []string { return append([]string{"lvmd", "check", in(w, "lvmd.yaml")}, extra...) }
	}
	valid := "device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n  spare-gb: 0\n"
	file := func(data string) func(t *testing.T, w *world) {
		return func(t *testing.T, w *world) { put(t, w.in, "lvmd.yaml", data, 0o644) }
	}
	rows := []row{
		{name: "lvmd check/plain/valid, host given", class: plain, setup: file(valid), args: check("--volume-groups", "rhel"), want: exitOK},
		{name: "lvmd check/plain/-o yaml", class: plain, setup: file(valid), args: check("--volume-groups", "rhel", "-o", "yaml"), want: exitOK},
		{name: "lvmd check/absent/FILE", class: absent, args: check(), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/absent/no FILE argument", class: absent, args: func(*world) []string { return []string{"lvmd", "check"} }, want: exitUsage},
		{name: "lvmd check/duplicated/two FILE arguments", class: duplicated, setup: file(valid),
			args: func(w *world) []string { return []string{"lvmd", "check", in(w, "lvmd.yaml"), in(w, "lvmd.yaml")} }, want: exitUsage},
		{name: "lvmd check/special/FILE a FIFO", class: special, setup: func(t *testing.T, w *world) { fifo(t, w.in, "lvmd.yaml") },
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/special/FILE linked to /dev/zero", class: special, setup: func(t *testing.T, w *world) { link(t, w.in, "lvmd.yaml", "/dev/zero") },
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/special/FILE a directory", class: special, setup: func(t *testing.T, w *world) { directory(t, w.in, "lvmd.yaml") },
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/huge/FILE over the cap", class: huge, setup: func(t *testing.T, w *world) { hugeFile(t, w.in, "lvmd.yaml", valid, overCap) },
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/duplicated/a second YAML document", class: duplicated, setup: file(valid + "---\n" + valid),
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "lvmd check/duplicated/a duplicated key", class: duplicated, setup: file(valid + "device-classes: []\n"),
			args: check("--volume-groups", "rhel"), want: exitError, names: []string{"lvmd.yaml"}},
		{name: "version/plain", class: plain, args: func(*world) []string { return []string{"version"} }, want: exitOK},
		{name: "version/plain/-o json", class: plain, args: func(*world) []string { return []string{"version", "-o", "json"} }, want: exitOK},
		{name: "version/absent/-o of no format", class: absent, args: func(*world) []string { return []string{"version", "-o", "wide"} },
			want: exitUsage, names: []string{"-o"}},
		{name: "version/duplicated/an argument", class: duplicated, args: func(*world) []string { return []string{"version", "version"} }, want: exitUsage},
	}
	for i := range rows {
		rows[i].mode = modeRead
	}
	runRows(t, rows)
}

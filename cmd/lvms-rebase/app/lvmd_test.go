package app

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
)

// everyTopoLVMField is the applier's sample setting every field of TopoLVM's lvmd types.
func everyTopoLVMField(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "applier", "testdata", "lvmd-every-topolvm-field.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLvmdCheckCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string // "" means a path that does not exist
		args []string
		code int
		want []string // lines (substrings) of stdout+stderr, in order
	}{
		{name: "every TopoLVM field, host has both groups", file: everyTopoLVMField(t), args: []string{"--volume-groups", "vg1,vg2"}, code: ExitOK,
			want: []string{"host: volume groups from --volume-groups (thin pools not checked)", "valid (device classes: striped, thin)"}},
		{name: "MicroShift's default-like file", file: "device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n  spare-gb: 0\n", args: []string{"--volume-groups", "rhel"}, code: ExitOK,
			want: []string{"valid (device classes: default)"}},
		{name: "no device classes", file: "socket-name: /run/lvmd/lvmd.socket\n", args: []string{"--volume-groups", "rhel"}, code: ExitOK,
			want: []string{"valid (device classes: none, so storage is not deployed)"}},
		{name: "every TopoLVM field, host lacks one group", file: everyTopoLVMField(t), args: []string{"--volume-groups", "vg1,other"}, code: ExitError,
			want: []string{`problem: lvmd config F: device-classes[1].volume-group: device class "thin": volume group "vg2" does not exist on this host (volume groups: vg1, other)`, "Error: F: 1 problem"}},
		{name: "every problem listed", code: ExitError,
			file: "socket-name: relative.sock\ndevice-classes:\n- name: a\n  volume-group: vg\n  spare-gb: lots\n  colour: red\n- name: b\n  stripe: x\n  thin-pool: {name: p}\nlvm-command-prefix: nsenter\n",
			want: []string{
				`problem: lvmd config F: device-classes[0].spare-gb: expected a non-negative integer, got string "lots"`,
				"problem: lvmd config F: device-classes[0].colour: unknown field",
				`problem: lvmd config F: device-classes[1].stripe: expected a non-negative integer, got string "x"`,
				"problem: lvmd config F: lvm-command-prefix: expected a list of strings",
				"host: not checked: the file has problems",
				"Error: F: 4 problems",
			}},
		{name: "rules lvmd enforces, all of them", code: ExitError,
			file: "socket-name: relative.sock\ndevice-classes:\n- name: a\n  volume-group: vg\n- name: a\n  type: thin\n- name: c\n  volume-group: vg\n  type: raid\nlvcreate-option-classes:\n- options: [x]\n",
			want: []string{
				`socket-name: "relative.sock" must be an absolute path`,
				`device-classes[1].name: duplicate device class "a"`,
				"device-classes[1].volume-group: must not be empty",
				`device-classes[1].thin-pool: required for device class "a" of type thin`,
				`device-classes[2].type: "raid" is not one of thick, thin`,
				"device-classes: 0 device classes have default: true",
				"lvcreate-option-classes[0].name: must not be empty",
				"Error: F: 7 problems",
			}},
		{name: "thin pool ratio and thick pool", code: ExitError,
			file: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  thin-pool: {name: p, overprovision-ratio: 2}\n- name: b\n  volume-group: vg\n  type: thin\n  thin-pool: {name: p, overprovision-ratio: 0.5}\n",
			want: []string{`device-classes[0].thin-pool: set on device class "a" of type "thick"`, "device-classes[1].thin-pool.overprovision-ratio: 0.5 must be >= 1", "Error: F: 2 problems"}},
		{name: "empty file", file: "# nothing\n", code: ExitError, want: []string{"file is empty", "Error: F: 1 problem"}},
		{name: "duplicate key", file: "device-classes:\n- name: a\n  name: b\n", code: ExitError, want: []string{`"name" already set`}},
		{name: "missing file", code: ExitError, want: []string{"Error: lvmd check: stat F: no such file or directory"}},
		{name: "no file argument", code: ExitUsage, args: []string{}, want: []string{"expected one FILE, got 0 arguments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lvmd.yaml")
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"lvmd", "check", path}, tc.args...)
			if tc.args != nil && len(tc.args) == 0 {
				args = []string{"lvmd", "check"}
			}
			code, out, errOut := runMain(t, args...)
			all := strings.ReplaceAll(out+errOut, path, "F")
			if code != tc.code {
				t.Errorf("exit %d, want %d; output:\n%s", code, tc.code, all)
			}
			rest := all
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order); output:\n%s", w, all)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// The inputs lvmd check must never take quietly: a second YAML document is a problem (lvmd reads
// only the first), a FIFO, a device behind a symlink and a directory are refused naming what
// they are (without blocking), and a host without LVM is said to be unchecked, in the summary
// line too.
func TestLvmdCheckHostileInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "two.yaml")
	valid := "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n"
	if err := os.WriteFile(two, []byte(valid+"---\ndevice-classes:\n- name: b\n  volume-group: other\n  default: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(one, []byte(valid), 0o644); err != nil {
		t.Fatal(err)
	}
	noLVM := t.TempDir() // PATH without vgs
	for _, tc := range []struct {
		name string
		args []string
		path string // PATH; "" keeps it
		code int
		want string
	}{
		{"second document", []string{two, "--volume-groups", "vg"}, "", ExitError, "has 2 YAML documents; lvmd reads only the first"},
		{"fifo", []string{fifo}, "", ExitError, fifo + ": a named pipe (FIFO), not a regular file"},
		{"symlink to a device", []string{zero}, "", ExitError, zero + ": a character device, not a regular file"},
		{"directory", []string{dir}, "", ExitError, dir + ": a directory, not a regular file"},
		{"no LVM on the host", []string{one}, noLVM, ExitOK, one + ": valid as a file (device classes: a); the host was NOT checked: LVM is not installed here (give --volume-groups)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			}
			done := make(chan struct{})
			var code int
			var out, errOut string
			go func() { code, out, errOut = runMain(t, append([]string{"lvmd", "check"}, tc.args...)...); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("lvmd check blocked")
			}
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, want %d and %q; output:\n%s%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// -o json and -o yaml print one LvmdCheck object, problems and the host check as data, also
// when the file has problems (exit 1).
func TestLvmdCheckMachineOutput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  spare-gb: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, format string
		code         int
		want         map[string]any
	}{
		{good, "json", ExitOK, map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": "LvmdCheck", "file": good, "valid": true,
			"deviceClasses": []any{"a"}, "problems": []any{}, "host": map[string]any{"checked": true, "source": "volume groups from --volume-groups (thin pools not checked)"}}},
		{bad, "yaml", ExitError, map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": "LvmdCheck", "file": bad, "valid": false,
			"deviceClasses": []any{}, "problems": []any{map[string]any{"field": "device-classes[0].spare-gb", "reason": "-1 must be an integer >= 0"}},
			"host": map[string]any{"checked": false, "skipped": "the file has problems"}}},
	} {
		code, out, errOut := runMain(t, "lvmd", "check", tc.file, "--volume-groups", "vg", "-o", tc.format)
		var got map[string]any
		if err := yaml.Unmarshal([]byte(out), &got); err != nil || code != tc.code {
			t.Fatalf("-o %s: exit %d, %v\n%s%s", tc.format, code, err, out, errOut)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("-o %s (-want +got):\n%s", tc.format, diff)
		}
	}
}

package applier

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/lvmd"
)

func TestParseLvmd(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" means valid
		check   func(t *testing.T, c *LvmdConfig)
	}{
		{
			name: "sample with two classes",
			in: `socket-name: '/run/lvmd/lvmd.socket'
device-classes:
- name: "gold"
  default: true
  volume-group: "vg_1"
  spare-gb: 5
- name: "silver"
  default: false
  volume-group: "vg_2"
  spare-gb: 5
`,
			check: func(t *testing.T, c *LvmdConfig) {
				if len(c.DeviceClasses) != 2 || c.DeviceClasses[1].VolumeGroup != "vg_2" || *c.DeviceClasses[0].SpareGB != 5 {
					t.Errorf("unexpected config %+v", c.DeviceClasses)
				}
			},
		},
		{
			name: "socket defaulted",
			in:   "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n",
			check: func(t *testing.T, c *LvmdConfig) {
				if c.SocketName != defaultSocketName {
					t.Errorf("SocketName = %q, want %q", c.SocketName, defaultSocketName)
				}
			},
		},
		{
			name: "thin class",
			in:   "device-classes:\n- name: thin\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: pool\n    overprovision-ratio: 10\n",
		},
		{name: "no device classes is valid (storage disabled)", in: "socket-name: /run/lvmd/lvmd.socket\n"},
		{name: "empty file", in: "\n# only a comment\n", wantErr: "file is empty"},
		{name: "unknown field", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  colour: red\n", wantErr: `device-classes[0].colour: unknown field`},
		{name: "unknown top-level field", in: "sockets: x\n", wantErr: `sockets: unknown field`},
		{name: "unknown field in a later class names the allowed ones", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: b\n  volume-group: vg\n  colour: red\n", wantErr: `device-classes[1].colour: unknown field (allowed: name, volume-group, default, spare-gb, stripe, stripe-size, lvcreate-options, type, thin-pool)`},
		{name: "unknown thin-pool field names the allowed ones", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: p\n    size: 3\n", wantErr: `(allowed: name, overprovision-ratio)`},
		{name: "duplicate key", in: "device-classes:\n- name: a\n  name: b\n", wantErr: `"name" already set`},
		{name: "no default", in: "device-classes:\n- name: a\n  volume-group: vg\n", wantErr: "device-classes: 0 device classes have default: true"},
		{name: "two defaults", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: b\n  volume-group: vg2\n  default: true\n", wantErr: "2 device classes have default: true"},
		{name: "duplicate names", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: a\n  volume-group: vg2\n", wantErr: `device-classes[1].name: duplicate device class "a"`},
		{name: "missing name", in: "device-classes:\n- volume-group: vg\n  default: true\n", wantErr: "device-classes[0].name: must not be empty"},
		{name: "missing volume group", in: "device-classes:\n- name: a\n  default: true\n", wantErr: "device-classes[0].volume-group: must not be empty"},
		{name: "negative spare", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  spare-gb: -1\n", wantErr: "device-classes[0].spare-gb: -1 must be an integer >= 0"},
		{name: "spare of the second class mistyped", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: b\n  volume-group: vg2\n  spare-gb: lots\n", wantErr: `device-classes[1].spare-gb: expected a non-negative integer, got string "lots"`},
		{name: "default not a bool", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: yes please\n", wantErr: "device-classes[0].default: expected a boolean"},
		{name: "lvcreate-options not a list", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  lvcreate-options: --type=raid1\n", wantErr: "device-classes[0].lvcreate-options: expected a list of strings"},
		{name: "lvcreate-options item not a string", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  lvcreate-options: [[x]]\n", wantErr: "device-classes[0].lvcreate-options[0]: expected a string"},
		{name: "thin-pool ratio mistyped", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: p\n    overprovision-ratio: ten\n", wantErr: "device-classes[0].thin-pool.overprovision-ratio: expected a number"},
		{name: "unknown thin-pool field", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: p\n    size: 3\n", wantErr: `device-classes[0].thin-pool.size: unknown field`},
		{name: "option class without name", in: "lvcreate-option-classes:\n- options: [--type=raid1]\n", wantErr: "lvcreate-option-classes[0].name: must not be empty"},
		{name: "option class unknown field", in: "lvcreate-option-classes:\n- name: r\n  opts: [x]\n", wantErr: "lvcreate-option-classes[0].opts: unknown field"},
		{name: "command prefix not a list", in: "lvm-command-prefix: nsenter\n", wantErr: "lvm-command-prefix: expected a list of strings"},
		{
			name: "every TopoLVM field",
			in:   everyTopoLVMField(t),
			check: func(t *testing.T, c *LvmdConfig) {
				d := c.DeviceClasses[0]
				if *d.Stripe != 2 || d.StripeSize != "64k" || d.LVCreateOptions[0] != "--type=raid1" || *d.SpareGB != 10 {
					t.Errorf("device class 0 = %+v", d)
				}
				if c.DeviceClasses[1].ThinPool.OverprovisionRatio != 5 || c.LvcreateOptionClasses[0].Options[1] != "--mirrors=1" || len(c.LVMCommandPrefix) != 8 {
					t.Errorf("config = %+v", c)
				}
				if c.DefaultDeviceClass().Name != "striped" {
					t.Errorf("DefaultDeviceClass = %q", c.DefaultDeviceClass().Name)
				}
			},
		},
		{name: "thin without pool", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n", wantErr: "device-classes[0].thin-pool: required"},
		{name: "thin pool without name", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    overprovision-ratio: 2\n", wantErr: "device-classes[0].thin-pool.name"},
		{name: "overprovision below one", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: p\n    overprovision-ratio: 0.5\n", wantErr: "device-classes[0].thin-pool.overprovision-ratio: 0.5 must be >= 1"},
		{name: "thick with pool", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  thin-pool:\n    name: p\n    overprovision-ratio: 2\n", wantErr: `device-classes[0].thin-pool: set on device class "a" of type "thick"`},
		{name: "bad type", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  type: raid\n", wantErr: `device-classes[0].type: "raid"`},
		{name: "relative socket", in: "socket-name: lvmd.sock\n", wantErr: "socket-name"},
		{name: "null class", in: "device-classes:\n- null\n", wantErr: "device-classes[0]: device class is null"},
		{name: "stripe zero", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n  stripe: 0\n", wantErr: "device-classes[0].stripe"},
		{name: "not yaml", in: "device-classes: [\n", wantErr: "lvmd config test.yaml"},
		// A second document is read by nobody (MicroShift, vg-manager and sigs.k8s.io/yaml take
		// the first): it is refused, not ignored.
		{name: "second document", in: "device-classes:\n- name: a\n  volume-group: vg\n  default: true\n---\ndevice-classes:\n- name: b\n  volume-group: vg\n  default: true\n", wantErr: "has 2 YAML documents; lvmd reads only the first"},
		{name: "second document only comments", in: "---\n# head\ndevice-classes:\n- name: a\n  volume-group: vg\n  default: true\n---\n# trailing\n", check: func(t *testing.T, c *LvmdConfig) {
			if len(c.DeviceClasses) != 1 {
				t.Errorf("classes %+v", c.DeviceClasses)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseLvmdConfig("test.yaml", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseLvmdConfig error = %v, want it to contain %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "test.yaml") {
					t.Errorf("error %q does not name the file", err)
				}
				var le *LvmdError
				if !errors.As(err, &le) {
					t.Errorf("error %T is not an *LvmdError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseLvmdConfig: %v", err)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestDefaultLvmd(t *testing.T) {
	tests := []struct {
		vgs     []string
		wantVG  string
		wantMsg string
	}{
		{nil, "", "No volume groups found"},
		{[]string{"rhel"}, "rhel", "Defaulting to the only available volume group"},
		{[]string{"rhel", "microshift"}, "microshift", `Found default volume group "microshift"`},
		{[]string{"rhel", "data"}, "", "Multiple volume groups are available, but no configuration file was provided."},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.vgs, ","), func(t *testing.T) {
			c, msg := defaultLvmd(tc.vgs)
			if msg != tc.wantMsg {
				t.Errorf("message = %q, want %q", msg, tc.wantMsg)
			}
			if tc.wantVG == "" {
				if c.Enabled() {
					t.Errorf("config enabled with %v, want disabled", c.DeviceClasses)
				}
				return
			}
			if !c.Enabled() || c.DeviceClasses[0].VolumeGroup != tc.wantVG || !c.DeviceClasses[0].Default {
				t.Fatalf("device classes = %+v, want default class on %s", c.DeviceClasses, tc.wantVG)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("default config invalid: %v", err)
			}
		})
	}
}

// The canonical form is what MicroShift has always rendered for the default config (domain §8.3).
func TestCanonicalDefault(t *testing.T) {
	c, _ := defaultLvmd([]string{"vg"})
	got, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := `device-classes:
- default: true
  lvcreate-options: null
  name: default
  spare-gb: 0
  stripe: null
  stripe-size: ""
  thin-pool: null
  type: ""
  volume-group: vg
socket-name: /run/lvmd/lvmd.socket
`
	if string(got) != want {
		t.Errorf("Canonical() =\n%s\nwant\n%s", got, want)
	}
	// The TopoLVM rendered form (ConfigMap data, checksum input) carries the message line.
	r, err := c.Rendered("Defaulting to the only available volume group")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Defaulting to the only available volume group\n" + want; string(r) != want {
		t.Errorf("Rendered() =\n%s\nwant\n%s", r, want)
	}
	if r, _ := c.Rendered(""); string(r) != want {
		t.Errorf("Rendered(\"\") =\n%s\nwant the canonical form", r)
	}
	// Comments and key order in the user's file do not change the canonical bytes.
	p, err := parseLvmdConfig("x", []byte("# hello\nsocket-name: /run/lvmd/lvmd.socket\ndevice-classes:\n- volume-group: vg\n  name: default\n  spare-gb: 0\n  default: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got2, _ := p.Canonical(); string(got2) != want {
		t.Errorf("canonical form of an equivalent file differs:\n%s", got2)
	}
}

func TestLoadLvmd(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "absent.yaml")
	c, src, err := loadLvmd(context.Background(), missing, StaticVolumeGroups{"microshift"})
	if err != nil || !c.Enabled() || src.Path != "" || src.Message != "Defaulting to the only available volume group" {
		t.Fatalf("defaults: %+v %+v %v", c, src, err)
	}
	good := filepath.Join(dir, "lvmd.yaml")
	mustWriteFile(t, good, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n"), 0o644)
	c, src, err = loadLvmd(context.Background(), good, failingVGs{})
	if err != nil || src.Message != "Read from "+good || c.DeviceClasses[0].Name != "a" {
		t.Fatalf("user file: %+v %+v %v", c, src, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	mustWriteFile(t, bad, []byte("device-classes:\n- name: a\n"), 0o644)
	if _, _, err = loadLvmd(context.Background(), bad, StaticVolumeGroups{"vg"}); err == nil || !strings.Contains(err.Error(), "volume-group") {
		t.Fatalf("bad user file must be an error, not defaults: %v", err)
	}
	if _, _, err = loadLvmd(context.Background(), missing, failingVGs{}); !errors.Is(err, ErrNoLVM) {
		t.Fatalf("vgs failure: %v, want ErrNoLVM", err)
	}
}

// An lvmd.yaml that is a FIFO, a device, a directory or huge is an *LvmdError naming the file and
// what it is, found without blocking, never defaults; Apply fails only the storage component.
func TestLvmdSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	mustWriteFile(t, huge, make([]byte, MaxLvmdFileSize+1), 0o644)
	for path, want := range map[string]string{
		fifo: "a named pipe (FIFO), not a regular file",
		zero: "a character device, not a regular file",
		dir:  "a directory, not a regular file",
		huge: "more than the 1048576 allowed",
	} {
		done := make(chan error, 1)
		go func() { _, _, err := loadLvmd(context.Background(), path, StaticVolumeGroups{"vg"}); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatalf("loadLvmd(%s) blocked", path)
		}
		var le *LvmdError
		if !errors.As(err, &le) || le.File != path || !strings.Contains(err.Error(), want) {
			t.Errorf("loadLvmd(%s) = %v, want an *LvmdError naming it: %q", path, err, want)
		}
		o := testOptions(t, "4.18")
		o.LvmdPath = path
		pl := mustPrepare(t, o)
		if !errors.As(pl.storageErr, &le) || pl.result.Plan.Storage || !pl.result.Plan.SnapshotController {
			t.Errorf("Apply with lvmd %s: storage error %v, plan %+v", path, pl.storageErr, pl.result.Plan)
		}
	}
}

type failingVGs struct{}

func (failingVGs) VolumeGroups(context.Context) ([]string, error) { return nil, ErrNoLVM }

func FuzzParseLvmd(f *testing.F) {
	for _, s := range []string{
		"device-classes:\n- name: a\n  volume-group: vg\n  default: true\n",
		"socket-name: /run/lvmd/lvmd.socket\ndevice-classes:\n- name: t\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool: {name: p, overprovision-ratio: 2}\n",
		"device-classes: []\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseLvmdConfig("fuzz", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "lvmd config fuzz") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		// Anything accepted must be valid, render canonically, and re-parse to the same bytes.
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
		canon, err := c.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := parseLvmdConfig("fuzz", canon)
		if err != nil {
			t.Fatalf("canonical form does not re-parse: %v\n%s", err, canon)
		}
		canon2, _ := c2.Canonical()
		if string(canon) != string(canon2) {
			t.Fatalf("canonical form not stable:\n%s\n---\n%s", canon, canon2)
		}
	})
}

// topolvmLvmdFields are the JSON field names of TopoLVM's lvmd configuration types, as LVMS parses
// the runtime copy (topolvm cmd/lvmd/app/config.go Config and pkg/lvmd/types DeviceClass,
// ThinPoolConfig, LvcreateOptionClass). The applier must accept exactly these.
var topolvmLvmdFields = map[string][]string{
	"Config":              {"socket-name", "device-classes", "lvcreate-option-classes", "lvm-command-prefix"},
	"DeviceClass":         {"name", "volume-group", "default", "spare-gb", "stripe", "stripe-size", "lvcreate-options", "type", "thin-pool"},
	"ThinPoolConfig":      {"name", "overprovision-ratio"},
	"LvcreateOptionClass": {"name", "options"},
}

func TestLvmdFieldsMatchTopoLVM(t *testing.T) {
	tags := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		return out
	}
	for _, c := range []struct {
		topolvm string
		typed   any
		schema  []string
	}{
		{"Config", LvmdConfig{}, lvmd.Fields()},
		{"DeviceClass", DeviceClass{}, lvmd.Fields("device-classes")},
		{"ThinPoolConfig", ThinPoolConfig{}, lvmd.Fields("device-classes", "thin-pool")},
		{"LvcreateOptionClass", LvcreateOptionClass{}, lvmd.Fields("lvcreate-option-classes")},
	} {
		want := topolvmLvmdFields[c.topolvm]
		if got := tags(c.typed); !slices.Equal(got, want) {
			t.Errorf("%s: Go type fields %v, TopoLVM has %v", c.topolvm, got, want)
		}
		if got := c.schema; !slices.Equal(got, want) {
			t.Errorf("%s: schema fields %v, TopoLVM has %v", c.topolvm, got, want)
		}
	}
}

// everyTopoLVMField sets every field of TopoLVM's lvmd Config, DeviceClass, ThinPoolConfig and
// LvcreateOptionClass (testdata, shared with the CLI's lvmd check test).
func everyTopoLVMField(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lvmd-every-topolvm-field.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package applier

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGates(t *testing.T) {
	tests := []struct {
		name    string
		in      gateInput
		want    Plan
		wantErr string
	}{
		{name: "defaults 4.18", in: gateInput{}, want: Plan{Storage: true, SnapshotController: true}},
		{name: "defaults 4.17 include the webhook it ships", in: gateInput{WebhookShipped: true}, want: Plan{Storage: true, SnapshotController: true, SnapshotWebhook: true}},
		{name: "driver lvms", in: gateInput{Config: StorageConfig{Driver: "lvms"}}, want: Plan{Storage: true, SnapshotController: true}},
		// Quirk (a): an explicit [] means the same as unset.
		{name: "explicit empty list equals unset", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{}}}, want: Plan{Storage: true, SnapshotController: true}},
		// Quirk (b): [""] from the 4.17 default config means unset, not "nothing".
		{name: "empty string equals unset", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{""}}}, want: Plan{Storage: true, SnapshotController: true}},
		{name: "none disables snapshots", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{"none"}}}, want: Plan{Storage: true}},
		// Quirk (c): none mixed with others is an error, not "disable all".
		{name: "none mixed", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{"none", "snapshot-controller"}}}, wantErr: `storage.optionalCsiComponents: "none" cannot be combined`},
		// 4.17 deployed only RBAC for snapshot-controller alone; here it deploys the controller.
		{name: "controller alone", in: gateInput{WebhookShipped: true, Config: StorageConfig{OptionalCSIComponents: []string{"snapshot-controller"}}}, want: Plan{Storage: true, SnapshotController: true}},
		{name: "webhook alone", in: gateInput{WebhookShipped: true, Config: StorageConfig{OptionalCSIComponents: []string{"snapshot-webhook"}}}, want: Plan{Storage: true, SnapshotWebhook: true}},
		{name: "webhook not shipped", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{"snapshot-webhook"}}}, wantErr: `storage.optionalCsiComponents[0]: "snapshot-webhook" is not shipped`},
		{name: "unknown component", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{"snapshot-controller", "foo"}}}, wantErr: `storage.optionalCsiComponents[1]: "foo"`},
		{name: "duplicates collapse", in: gateInput{Config: StorageConfig{OptionalCSIComponents: []string{"snapshot-controller", "snapshot-controller"}}}, want: Plan{Storage: true, SnapshotController: true}},
		{name: "driver none", in: gateInput{Config: StorageConfig{Driver: "none"}}, want: Plan{SnapshotController: true}},
		{name: "driver none with lvmd file is reported", in: gateInput{Config: StorageConfig{Driver: "none"}, LvmdFilePresent: true}, want: Plan{SnapshotController: true, Warnings: []string{`storage.driver is "none" but an lvmd config file exists; LVMS is not deployed and the file is ignored`}}},
		{name: "driver none and no snapshots", in: gateInput{Config: StorageConfig{Driver: "none", OptionalCSIComponents: []string{"none"}}}, want: Plan{}},
		{name: "unknown driver", in: gateInput{Config: StorageConfig{Driver: "topolvm"}}, wantErr: `storage.driver: "topolvm"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decideGates(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("decideGates error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decideGates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStorageConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     StorageConfig
		wantErr  string
	}{
		{name: "no storage section", in: "dns:\n  baseDomain: example.com\n"},
		{name: "empty file", in: ""},
		{name: "driver and list", in: "dns: {}\nstorage:\n  driver: none\n  optionalCsiComponents: [none]\n", want: StorageConfig{Driver: "none", OptionalCSIComponents: []string{"none"}}},
		{name: "unknown storage key", in: "storage:\n  drivr: none\n", wantErr: `storage: error unmarshaling JSON: while decoding JSON: json: unknown field "drivr"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStorageConfig("config.yaml", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "config.yaml") {
					t.Fatalf("error = %v, want %q naming config.yaml", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// MicroShift's merge rules: config.yaml first, then config.d/**/*.yaml in walk order as JSON merge
// patches (maps merge, lists replace, null deletes); .yml files and blank files are ignored.
func TestLoadStorageConfig(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    StorageConfig
		wantErr string
	}{
		{name: "nothing", want: StorageConfig{}},
		{name: "main file only", files: map[string]string{"config.yaml": "storage:\n  driver: none\n"}, want: StorageConfig{Driver: "none"}},
		{
			name: "drop-ins override in lexical order, lists replace",
			files: map[string]string{
				"config.yaml":            "storage:\n  driver: none\n  optionalCsiComponents: [snapshot-controller, snapshot-webhook]\n",
				"config.d/20-b.yaml":     "storage:\n  optionalCsiComponents: [none]\n",
				"config.d/10-a.yaml":     "storage:\n  driver: lvms\n  optionalCsiComponents: [snapshot-webhook]\n",
				"config.d/15/sub.yaml":   "apiServer:\n  port: 1\n",
				"config.d/99-skip.yml":   "storage:\n  driver: bogus\n",
				"config.d/50-blank.yaml": "\n\n",
			},
			want: StorageConfig{Driver: "lvms", OptionalCSIComponents: []string{"none"}},
		},
		{
			name:  "null deletes a key",
			files: map[string]string{"config.yaml": "storage:\n  driver: none\n", "config.d/1.yaml": "storage:\n  driver: null\n"},
			want:  StorageConfig{},
		},
		{name: "drop-in only", files: map[string]string{"config.d/1.yaml": "storage:\n  driver: none\n"}, want: StorageConfig{Driver: "none"}},
		{
			name:    "unknown storage key in a drop-in",
			files:   map[string]string{"config.d/1.yaml": "storage:\n  drivr: none\n"},
			wantErr: "drivr",
		},
		{name: "bad yaml names the file", files: map[string]string{"config.d/bad.yaml": "storage: [\n"}, wantErr: "bad.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				mustMkdirAll(t, filepath.Dir(p), 0o755)
				mustWriteFile(t, p, []byte(data), 0o644)
			}
			got, err := LoadStorageConfig(filepath.Join(dir, "config.yaml"), filepath.Join(dir, "config.d"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("LoadStorageConfig (-want +got):\n%s", diff)
			}
		})
	}
}

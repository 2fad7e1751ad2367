package rebase

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// TestValidate: each option mistake Run and Resolve refuse before any network access is an
// *option.Error naming that option (the CLI spells it as a flag and exits 2).
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		opts Options
		want option.Name // "" for valid
	}{
		{"valid", Options{OCP: "4.18", LVMS: "4.17", Payload: PayloadNewest, MicroShiftDir: dir}, ""},
		{"defaults", Options{MicroShiftDir: dir}, ""},
		{"ocp with patch", Options{OCP: "4.18.3", MicroShiftDir: dir}, option.OCP},
		{"ocp with v", Options{OCP: "v4.18", MicroShiftDir: dir}, option.OCP},
		{"ocp without era", Options{OCP: "3.11", MicroShiftDir: dir}, option.OCP},
		{"lvms with patch", Options{OCP: "4.18", LVMS: "4.17.1", MicroShiftDir: dir}, option.LVMS},
		{"payload rule", Options{Payload: "latest", MicroShiftDir: dir}, option.Payload},
		{"no checkout", Options{MicroShiftDir: missing}, option.MicroShiftDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			var oe *option.Error
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (!errors.As(err, &oe) || oe.Option != tc.want || !IsUsage(err)):
				t.Fatalf("error %v, want an *option.Error about %s", err, tc.want)
			}
			if tc.want == "" {
				return
			}
			// Run refuses the same options, before it touches the tree.
			if _, err := Run(context.Background(), Options{OCP: tc.opts.OCP, LVMS: tc.opts.LVMS, Payload: tc.opts.Payload,
				MicroShiftDir: tc.opts.MicroShiftDir, Kustomize: fstest.MapFS{}}); !errors.As(err, &oe) || oe.Option != tc.want {
				t.Fatalf("Run: error %v, want an *option.Error about %s", err, tc.want)
			}
		})
	}
}

// TestResolveOptions: Resolve validates its options before building a source, and a source
// that cannot be configured is a usage error.
func TestResolveOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ResolveOptions
		want option.Name // "" for ErrUsage without an option
	}{
		{"no ocp", ResolveOptions{}, option.OCP},
		{"bad ocp", ResolveOptions{OCP: "4"}, option.OCP},
		{"bad lvms", ResolveOptions{OCP: "4.18", LVMS: "v4.17"}, option.LVMS},
		{"missing IDMS file", ResolveOptions{OCP: "4.18", Source: source.Options{IDMSFile: filepath.Join(t.TempDir(), "idms.yaml"), Offline: true}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(context.Background(), tc.opts)
			var oe *option.Error
			if !IsUsage(err) || errors.As(err, &oe) != (tc.want != "") || (oe != nil && oe.Option != tc.want) {
				t.Fatalf("error %v, want a usage error about %q", err, tc.want)
			}
		})
	}
}

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
			// A checkout that is not there is bad input (*option.PathError), not a usage error.
			about := func(err error) option.Name {
				var oe *option.Error
				var pe *option.PathError
				switch {
				case errors.As(err, &pe) && !IsUsage(err) && pe.Option == option.MicroShiftDir:
					return pe.Option
				case errors.As(err, &oe) && IsUsage(err) && oe.Option != option.MicroShiftDir:
					return oe.Option
				}
				return ""
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && about(err) != tc.want:
				t.Fatalf("error %v, want an *option.Error (*option.PathError for a path) about %s", err, tc.want)
			}
			if tc.want == "" {
				return
			}
			// Run refuses the same options, before it touches the tree.
			if _, err := Run(context.Background(), Options{OCP: tc.opts.OCP, LVMS: tc.opts.LVMS, Payload: tc.opts.Payload,
				MicroShiftDir: tc.opts.MicroShiftDir, Kustomize: fstest.MapFS{}}); about(err) != tc.want {
				t.Fatalf("Run: error %v, want an *option.Error about %s", err, tc.want)
			}
		})
	}
}

// TestResolveOptions: Resolve validates its options before building a source (usage errors),
// and a file an option names that does not load is an *option.PathError, not a usage error.
func TestResolveOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ResolveOptions
		want option.Name // "" for ErrUsage without an option
	}{
		{"no ocp", ResolveOptions{}, option.OCP},
		{"bad ocp", ResolveOptions{OCP: "4"}, option.OCP},
		{"bad lvms", ResolveOptions{OCP: "4.18", LVMS: "v4.17"}, option.LVMS},
		{"missing IDMS file", ResolveOptions{OCP: "4.18", Source: source.Options{IDMSFile: filepath.Join(t.TempDir(), "idms.yaml"), Offline: true}}, option.IDMSFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(context.Background(), tc.opts)
			var oe *option.Error
			var pe *option.PathError
			switch {
			case tc.want == option.IDMSFile:
				if !errors.As(err, &pe) || pe.Option != tc.want || IsUsage(err) {
					t.Fatalf("error %v, want an *option.PathError about %q, not a usage error", err, tc.want)
				}
			case !IsUsage(err) || !errors.As(err, &oe) || oe.Option != tc.want:
				t.Fatalf("error %v, want a usage error about %q", err, tc.want)
			}
		})
	}
}

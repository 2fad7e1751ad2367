package app

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

func TestSourceFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(*testing.T, source.Options)
		err   string
	}{
		{name: "defaults", check: func(t *testing.T, o source.Options) {
			if o.BundleRepo != source.DefaultBundleRepo || o.ReleaseRepo != source.DefaultReleaseRepo ||
				o.Arches != nil || o.MaxFileSize != 64<<20 || o.MaxImageSize != 512<<20 || o.ReleaseRefs != nil {
				t.Fatalf("%+v", o)
			}
		}},
		// Given, even as the default: the library tells it from none (--check against the lock).
		{name: "arches given as the default", args: []string{"--arch", "x86_64,aarch64"}, check: func(t *testing.T, o source.Options) {
			if !reflect.DeepEqual(o.Arches, []string{"x86_64", "aarch64"}) {
				t.Fatal(o.Arches)
			}
		}},
		{name: "three names for the auth file", args: []string{"-a", "/p.json"}, check: func(t *testing.T, o source.Options) {
			if o.AuthFile != "/p.json" {
				t.Fatal(o.AuthFile)
			}
		}},
		{name: "registry-config", args: []string{"--registry-config", "/r.json"}, check: func(t *testing.T, o source.Options) {
			if o.AuthFile != "/r.json" {
				t.Fatal(o.AuthFile)
			}
		}},
		{name: "authfile", args: []string{"--authfile", "/x.json", "--registry-config", "/x.json"}, check: func(t *testing.T, o source.Options) {
			if o.AuthFile != "/x.json" {
				t.Fatal(o.AuthFile)
			}
		}},
		{name: "conflicting auth files", args: []string{"--authfile", "/x.json", "--registry-config", "/y.json"}, err: "name different files"},
		{name: "arch placeholder", args: []string{"--ocp-release", "quay.io/r:4.18.0-{arch}"}, check: func(t *testing.T, o source.Options) {
			want := map[string]string{"x86_64": "quay.io/r:4.18.0-x86_64", "aarch64": "quay.io/r:4.18.0-aarch64"}
			if !reflect.DeepEqual(o.ReleaseRefs, want) {
				t.Fatal(o.ReleaseRefs)
			}
		}},
		{name: "nightly pins per arch", args: []string{"--ocp-release", "registry.ci.openshift.org/ocp/release:4.18.0-0.nightly-1", "--ocp-release-aarch64", "registry.ci.openshift.org/ocp-arm64/release-arm64:4.18.0-0.nightly-arm64-1"}, check: func(t *testing.T, o source.Options) {
			if o.ReleaseRefs["x86_64"] != "registry.ci.openshift.org/ocp/release:4.18.0-0.nightly-1" || !strings.Contains(o.ReleaseRefs["aarch64"], "arm64") {
				t.Fatal(o.ReleaseRefs)
			}
		}},
		{name: "one arch pinned only", args: []string{"--ocp-release-x86_64", "quay.io/r:4.18.0-x86_64"}, err: "not aarch64"},
		{name: "pin for an arch not asked for", args: []string{"--arch", "x86_64", "--ocp-release-x86_64", "a:b", "--ocp-release-aarch64", "c:d"}, err: "aarch64 is not in --arch"},
		{name: "bad arch", args: []string{"--arch", "x86_64,mips"}, err: "mips"},
		{name: "mirrors", args: []string{"--mirror", "registry.redhat.io=127.0.0.1:5000/rh", "--mirror", "quay.io=m.local/q"}, check: func(t *testing.T, o source.Options) {
			if len(o.Mirrors) != 2 || o.Mirrors[0].Mirror != "127.0.0.1:5000/rh" {
				t.Fatal(o.Mirrors)
			}
		}},
		{name: "bad mirror", args: []string{"--mirror", "nope"}, err: "SRC=DST"},
		{name: "mirror without a host", args: []string{"--mirror", "registry.redhat.io=seeded/rh"}, err: "registry host"},
		{name: "sizes", args: []string{"--max-file-size", "1Gi", "--max-image-size", "2GiB"}, check: func(t *testing.T, o source.Options) {
			if o.MaxFileSize != 1<<30 || o.MaxImageSize != 2<<30 {
				t.Fatal(o.MaxFileSize, o.MaxImageSize)
			}
		}},
		{name: "bad size", args: []string{"--max-file-size", "-1"}, err: "positive size"},
		// Sizes are Kubernetes quantities: M is decimal, Mi binary, as kubectl reads them.
		{name: "decimal and binary units", args: []string{"--max-file-size", "64M", "--max-image-size", "64Mi"}, check: func(t *testing.T, o source.Options) {
			if o.MaxFileSize != 64_000_000 || o.MaxImageSize != 64<<20 {
				t.Fatal(o.MaxFileSize, o.MaxImageSize)
			}
		}},
		{name: "plain bytes and fractions", args: []string{"--max-file-size", "1000", "--max-image-size", "1.5Gi"}, check: func(t *testing.T, o source.Options) {
			if o.MaxFileSize != 1000 || o.MaxImageSize != 3<<29 {
				t.Fatal(o.MaxFileSize, o.MaxImageSize)
			}
		}},
		{name: "zero size", args: []string{"--max-image-size", "0"}, err: "--max-image-size: want a positive size"},
		{name: "unknown unit", args: []string{"--max-image-size", "12 parsecs"}, err: `--max-image-size: want a positive size such as 64Mi (2^20 bytes) or 64M (10^6 bytes), got "12 parsecs"`},
		{name: "too large", args: []string{"--max-image-size", "8Ei"}, err: "--max-image-size"},
		{name: "file cap above image cap", args: []string{"--max-file-size", "1Gi"}, err: "larger than"},
		{name: "negative timeout", args: []string{"--timeout", "-1s"}, err: "negative"},
		{name: "Go arch names", args: []string{"--arch", "amd64,x86_64,arm64", "--ocp-release", "quay.io/r:4.18.0-{arch}"}, check: func(t *testing.T, o source.Options) {
			want := map[string]string{"x86_64": "quay.io/r:4.18.0-x86_64", "aarch64": "quay.io/r:4.18.0-aarch64"}
			if !reflect.DeepEqual(o.Arches, []string{"x86_64", "aarch64"}) || !reflect.DeepEqual(o.ReleaseRefs, want) {
				t.Fatal(o.Arches, o.ReleaseRefs)
			}
		}},
		{name: "repeated arch flag and a list", args: []string{"--arch", "s390x", "--arch", "arm64,ppc64le", "--arch", "aarch64"}, check: func(t *testing.T, o source.Options) {
			if !reflect.DeepEqual(o.Arches, []string{"s390x", "aarch64", "ppc64le"}) {
				t.Fatal(o.Arches)
			}
		}},
		{name: "empty arch", args: []string{"--arch", ""}, err: "name at least one architecture"},
		{name: "insecure registry with a scheme", args: []string{"--insecure-registry", "http://mirror.local:5000/", "--insecure-registry", "127.0.0.1:5000"}, check: func(t *testing.T, o source.Options) {
			if !reflect.DeepEqual(o.Insecure, []string{"mirror.local:5000", "127.0.0.1:5000"}) {
				t.Fatal(o.Insecure)
			}
		}},
		{name: "insecure registry with a path", args: []string{"--insecure-registry", "mirror.local:5000/rh"}, err: "want HOST[:PORT]"},
		// An empty list item, as an unset CI variable leaves it, is no host (it matched none).
		{name: "insecure registry ','", args: []string{"--insecure-registry", ","}, err: `--insecure-registry ",": want HOST[:PORT]`},
		{name: "insecure registry ' , '", args: []string{"--insecure-registry", " , "}, err: "want HOST[:PORT]"},
		{name: "insecure registry a list", args: []string{"--insecure-registry", "a:1,b:2"}, err: "want HOST[:PORT]"},
		{name: "insecure registry, IPv6 and underscore", args: []string{"--insecure-registry", "[::1]:5000", "--insecure-registry", "my_registry"}, check: func(t *testing.T, o source.Options) {
			if !reflect.DeepEqual(o.Insecure, []string{"[::1]:5000", "my_registry"}) {
				t.Fatal(o.Insecure)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var f SourceFlags
			AddSourceFlags(fs, &f)
			if err := fs.Parse(tc.args); err != nil {
				// A value the flag's type rejects (--arch mips) is an invalid argument, which
				// Main reports as a usage error (TestArchFlag).
				if tc.err == "" || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parse error %v, want %q", err, tc.err)
				}
				return
			}
			o, err := f.Options()
			if tc.err != "" {
				var ec *exitCodeError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ec) || ec.code != ExitUsage {
					t.Fatalf("error %v, want usage error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
		})
	}
}

package app

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// SourceFlags are the registry flags shared by every command that pulls images (the main
// rebase, resolve, apply…). Bind them with AddSourceFlags and turn them into
// source.Options with Options.
type SourceFlags struct {
	BundleRepo  string
	ReleaseRepo string
	// Bundle pins the bundle (--lvms-bundle); Release pins payloads (--ocp-release, may hold
	// {arch}); ReleaseArch pins per arch (--ocp-release-x86_64 …) and wins over Release.
	Bundle      string
	Release     string
	ReleaseArch map[string]*string
	Arches      *archFlag

	AuthFile       string
	RegistryConfig string
	Mirrors        []string
	IDMSFile       string
	Insecure       []string

	CacheDir string
	Offline  bool
	Timeout  time.Duration

	AllowPrerelease  bool
	AllowVersionSkew bool
	MaxFileSize      string
	MaxImageSize     string
}

// pinArches are the arches that get their own --ocp-release-<arch> flag.
var pinArches = arch.Known()

// AddSourceFlags registers the shared registry flags on fs, bound to f.
func AddSourceFlags(fs *pflag.FlagSet, f *SourceFlags) {
	fs.StringVar(&f.BundleRepo, "lvms-bundle-repo", source.DefaultBundleRepo, "repository whose vX.Y.Z[-N] tags are searched for the LVMS bundle")
	fs.StringVar(&f.ReleaseRepo, "ocp-release-repo", source.DefaultReleaseRepo, "repository whose X.Y.Z-<arch> tags are searched for the OCP release payload")
	fs.StringVar(&f.Bundle, "lvms-bundle", "", "pin the bundle image (tag, digest or oci:PATH[:TAG|@DIGEST]); skips bundle tag resolution")
	fs.StringVar(&f.Release, "ocp-release", "", "pin the release payload for every arch (a {arch} placeholder expands to x86_64, aarch64…; a manifest list is narrowed per arch); skips payload tag resolution")
	f.ReleaseArch = map[string]*string{}
	for _, a := range pinArches {
		v := new(string)
		f.ReleaseArch[a] = v
		fs.StringVar(v, "ocp-release-"+a, "", "pin the "+a+" release payload (overrides --ocp-release for "+a+")")
	}
	f.Arches = newArchList()
	fs.Var(f.Arches, "arch", "architectures to resolve (x86_64, aarch64, ppc64le, s390x)")
	fs.StringVarP(&f.AuthFile, "authfile", "a", "", "registry credentials file (auths JSON); default: $REGISTRY_AUTH_FILE, ~/.pull-secret.json, podman auth.json, docker config.json")
	fs.StringVar(&f.RegistryConfig, "registry-config", "", "same as -a/--authfile (oc's spelling)")
	fs.StringArrayVar(&f.Mirrors, "mirror", nil, "pull SRC from DST instead, by repository prefix, for every pull (repeatable), e.g. registry.redhat.io=mirror.local:5000/rh")
	fs.StringVar(&f.IDMSFile, "idms-file", "", "ImageDigestMirrorSet or ImageContentSourcePolicy YAML; its mirrors apply to digest pulls, as with oc --idms-file")
	fs.StringArrayVar(&f.Insecure, "insecure-registry", nil, "HOST[:PORT] reachable over plain HTTP or TLS without verification (repeatable)")
	fs.StringVar(&f.CacheDir, "cache-dir", "", "content-addressed image cache (default $XDG_CACHE_HOME/lvms-rebase)")
	fs.BoolVar(&f.Offline, "offline", false, "use only the cache and oci: layouts; tags resolve from what the cache last saw")
	fs.DurationVar(&f.Timeout, "timeout", 30*time.Minute, "give up after this long (0: no limit)")
	fs.BoolVar(&f.AllowPrerelease, "allow-prerelease", false, "let payload resolution pick rc/ec releases")
	fs.BoolVar(&f.AllowVersionSkew, "allow-version-skew", false, "warn instead of failing when the bundle CSV's version minor differs from the one asked for")
	fs.StringVar(&f.MaxFileSize, "max-file-size", "64Mi", "largest single file extracted from an image: a Kubernetes quantity, 64Mi = 64×2^20 bytes, 64M = 64×10^6")
	fs.StringVar(&f.MaxImageSize, "max-image-size", "512Mi", "most uncompressed bytes read from one image's layers: a Kubernetes quantity (Ki/Mi/Gi binary, k/M/G decimal)")
}

// parseSize reads a size as Kubernetes does (resource.ParseQuantity): "64Mi" is 64×2²⁰ bytes,
// "64M" 64×10⁶, a plain number bytes. The KiB/MiB/GiB spellings earlier versions documented
// are still accepted as Ki/Mi/Gi. Fractions round up to a whole byte.
func parseSize(flag, s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "iB") {
		t = strings.TrimSuffix(t, "B")
	}
	q, err := resource.ParseQuantity(t)
	if err != nil || q.Sign() <= 0 || q.Cmp(*resource.NewQuantity(1<<62, resource.BinarySI)) > 0 {
		return 0, usageError("--%s: want a positive size such as 64Mi (2^20 bytes) or 64M (10^6 bytes), got %q", flag, s)
	}
	return q.Value(), nil
}

// Options validates the flags and builds source.Options. Mistakes are usage errors
// (exit 2).
func (f *SourceFlags) Options() (source.Options, error) {
	o := source.Options{
		BundleRepo:       f.BundleRepo,
		ReleaseRepo:      f.ReleaseRepo,
		BundleRef:        f.Bundle,
		IDMSFile:         f.IDMSFile,
		CacheDir:         f.CacheDir,
		Offline:          f.Offline,
		AllowPrerelease:  f.AllowPrerelease,
		AllowVersionSkew: f.AllowVersionSkew,
	}
	if f.Timeout < 0 {
		return o, usageError("--timeout: must not be negative")
	}
	var err error
	if o.AuthFile, err = f.authFile(); err != nil {
		return o, err
	}
	if o.Insecure, err = f.insecureHosts(); err != nil {
		return o, err
	}
	o.Arches = f.Arches.list()
	for _, m := range f.Mirrors {
		pm, err := source.ParseMirror(m)
		if err != nil {
			return o, usageError("--mirror: %v", err)
		}
		o.Mirrors = append(o.Mirrors, pm)
	}
	if o.ReleaseRefs, err = f.releasePins(o.Arches); err != nil {
		return o, err
	}
	if err := checkRefFlags(f, o); err != nil {
		return o, err
	}
	if !f.Arches.changed {
		// Not given: the library's default (the same arches), so that --check can tell a
		// given --arch that contradicts the lock from the lock's own arches.
		o.Arches = nil
	}
	if o.MaxFileSize, err = parseSize("max-file-size", f.MaxFileSize); err != nil {
		return o, err
	}
	if o.MaxImageSize, err = parseSize("max-image-size", f.MaxImageSize); err != nil {
		return o, err
	}
	if o.MaxFileSize > o.MaxImageSize {
		return o, usageError("--max-file-size (%d) is larger than --max-image-size (%d)", o.MaxFileSize, o.MaxImageSize)
	}
	return o, nil
}

// authFile is -a/--authfile or its oc spelling --registry-config; both naming different
// files is a usage error.
func (f *SourceFlags) authFile() (string, error) {
	switch {
	case f.AuthFile != "" && f.RegistryConfig != "" && f.AuthFile != f.RegistryConfig:
		return "", usageError("-a/--authfile and --registry-config name different files; give one")
	case f.AuthFile != "":
		return f.AuthFile, nil
	default:
		return f.RegistryConfig, nil
	}
}

// hostPort is a registry host as requests name it: a DNS name or IPv4 address, or an IPv6
// address in brackets, and an optional port.
var hostPort = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?)(:[0-9]{1,5})?$`)

// insecureHosts are the --insecure-registry values as HOST[:PORT].
func (f *SourceFlags) insecureHosts() ([]string, error) {
	var out []string
	for _, h := range f.Insecure {
		host := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(h), "https://"), "http://"), "/")
		// The value is compared with request hosts; anything else (an empty list item ",")
		// would silently never match.
		if !hostPort.MatchString(host) {
			return nil, usageError("--insecure-registry %q: want HOST[:PORT], e.g. mirror.local:5000", redact.URL(h))
		}
		out = append(out, host)
	}
	return out, nil
}

// releasePins are the payload pins per arch from --ocp-release-<arch> and --ocp-release
// (nil when none): all arches or none.
func (f *SourceFlags) releasePins(arches []string) (map[string]string, error) {
	pins := map[string]string{}
	for _, a := range arches {
		if p := f.ReleaseArch[a]; p != nil && *p != "" {
			pins[a] = *p
		} else if f.Release != "" {
			pins[a] = strings.ReplaceAll(f.Release, "{arch}", a)
		}
	}
	for _, a := range pinArches {
		if p := f.ReleaseArch[a]; p != nil && *p != "" && !slices.Contains(arches, a) {
			return nil, usageError("--ocp-release-%s given but %s is not in --arch", a, a)
		}
	}
	if len(pins) == 0 {
		return nil, nil
	}
	var missing []string
	for _, a := range arches {
		if pins[a] == "" {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, usageError("payload pinned for some arches but not %s: add --ocp-release-%s, or use --ocp-release with a {arch} placeholder", strings.Join(missing, ", "), missing[0])
	}
	return pins, nil
}

// String summarises where images come from, for logs.
func (f *SourceFlags) String() string {
	return fmt.Sprintf("bundle repo %s, release repo %s, arches %s", redact.URL(f.BundleRepo), redact.URL(f.ReleaseRepo), strings.Join(f.Arches.list(), ","))
}

// checkRefFlags parses every reference and repository flag: a malformed one is a usage
// error naming the flag, before anything is fetched.
func checkRefFlags(f *SourceFlags, o source.Options) error {
	for flag, v := range map[string]string{"lvms-bundle-repo": f.BundleRepo, "ocp-release-repo": f.ReleaseRepo} {
		if v != "" {
			if err := source.CheckRepo(v); err != nil {
				return usageError("--%s: %v", flag, err)
			}
		}
	}
	if f.Bundle != "" {
		if err := source.CheckRef(f.Bundle); err != nil {
			return usageError("--lvms-bundle: %v", err)
		}
	}
	for _, a := range o.Arches {
		if pin := o.ReleaseRefs[a]; pin != "" {
			if err := source.CheckRef(pin); err != nil {
				return usageError("--ocp-release or --ocp-release-%s: %v", a, err)
			}
		}
	}
	return nil
}

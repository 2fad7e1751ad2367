// Package auth finds registry credentials the way podman and oc users expect: an explicit
// auth file, $REGISTRY_AUTH_FILE, MicroShift's ~/.pull-secret.json, podman's auth.json, then
// docker's config.json (and its credential helpers). It remembers which file served each
// registry so an access error can say where the credentials came from.
package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
)

// authFile is one candidate credentials file and why it is on the list.
type authFile struct {
	path   string
	origin string // --authfile, REGISTRY_AUTH_FILE, …
}

// authFileCandidates lists, in lookup order, the credential files lvms-rebase consults:
// the explicit flag, $REGISTRY_AUTH_FILE, ~/.pull-secret.json (MicroShift's convention),
// podman's auth.json, then docker's config.json. Missing files (other than an explicit one)
// are skipped at lookup time.
func authFileCandidates(explicit string) []authFile {
	var files []authFile
	if explicit != "" {
		files = append(files, authFile{explicit, option.AuthFile.String()})
	}
	if p := os.Getenv("REGISTRY_AUTH_FILE"); p != "" {
		files = append(files, authFile{p, "REGISTRY_AUTH_FILE"})
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		files = append(files, authFile{filepath.Join(home, ".pull-secret.json"), "~/.pull-secret.json"})
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		files = append(files, authFile{filepath.Join(d, "containers", "auth.json"), "podman auth.json"})
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		files = append(files, authFile{filepath.Join(d, "containers", "auth.json"), "podman auth.json"})
	} else if home != "" {
		files = append(files, authFile{filepath.Join(home, ".config", "containers", "auth.json"), "podman auth.json"})
	}
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		files = append(files, authFile{filepath.Join(d, "config.json"), "docker config.json"})
	} else if home != "" {
		files = append(files, authFile{filepath.Join(home, ".docker", "config.json"), "docker config.json"})
	}
	return files
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

type authConfigFile struct {
	Auths map[string]authEntry `json:"auths"`
}

// Keychain looks credentials up in the candidate files in order; the first file with
// an entry for the repository (most specific key first) or its registry wins. It remembers
// which file served each registry so auth errors can name it.
type Keychain struct {
	files []authFile
	log   *slog.Logger

	mu     sync.Mutex
	parsed map[string]*authConfigFile
	used   map[string]string // registry -> description of the credential source
}

// New returns the keychain for an explicit auth file ("" for none), which must exist and hold
// auths JSON; log (optional) hears which file serves each registry. A file that cannot be used
// is an *option.PathError (bad input, not a usage mistake).
func New(explicit string, log *slog.Logger) (*Keychain, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &Keychain{files: authFileCandidates(explicit), log: log, parsed: map[string]*authConfigFile{}, used: map[string]string{}}
	if explicit == "" {
		return k, nil
	}
	fi, err := os.Stat(explicit)
	if err != nil {
		return nil, &option.PathError{Option: option.AuthFile, Path: explicit, Err: fmt.Errorf("auth file: %w", err)}
	}
	// Refused now, not when a registry first asks for credentials: a run that needs none (a
	// warm cache) would otherwise pass over a FIFO, /dev/zero or an empty file given here.
	if !fi.Mode().IsRegular() {
		return nil, &option.PathError{Option: option.AuthFile, Path: explicit, Err: fmt.Errorf("auth file %s: %s, not a regular file", explicit, safefile.Kind(fi.Mode()))}
	}
	if _, err := k.load(k.files[0]); err != nil {
		return nil, &option.PathError{Option: option.AuthFile, Path: explicit, Err: err}
	}
	return k, nil
}

func (k *Keychain) load(f authFile) (*authConfigFile, error) {
	if c, ok := k.parsed[f.path]; ok {
		return c, nil
	}
	// A person's or the environment's file: links are followed (mounted secrets are links),
	// to a regular file within the cap.
	data, err := safefile.ReadFile(f.path, safefile.Options{Follow: true})
	if errors.Is(err, fs.ErrNotExist) {
		k.parsed[f.path] = nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading auth file %s (%s): %w", f.path, f.origin, err)
	}
	var c authConfigFile
	if err := json.Unmarshal(data, &c); err != nil {
		// Never echo the content: it is a secret.
		return nil, fmt.Errorf("auth file %s (%s) is not valid auths JSON", f.path, f.origin)
	}
	k.parsed[f.path] = &c
	return &c, nil
}

// normKey strips the scheme and docker's legacy /v1/ suffix from an auths key.
func normKey(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key = strings.TrimSuffix(key, "/")
	key = strings.TrimSuffix(key, "/v1")
	key = strings.TrimSuffix(key, "/v2")
	if key == "docker.io" {
		key = "index.docker.io"
	}
	return key
}

// lookup finds the entry for repo (host/path) in c: the longest key that equals the repo,
// one of its parent namespaces, or the registry host.
func lookup(c *authConfigFile, repo string) (authEntry, bool) {
	var best, bestKey string
	var entry authEntry
	found := false
	for key, e := range c.Auths {
		k := normKey(key)
		if k != repo && !strings.HasPrefix(repo, k+"/") {
			continue
		}
		// Several spellings can name one registry ("quay.io", "https://quay.io"); map order
		// must not pick between them, so the key spelled exactly wins, then the shortest.
		if !found || len(k) > len(best) || (len(k) == len(best) && betterKey(key, bestKey, k)) {
			best, bestKey, entry, found = k, key, e, true
		}
	}
	return entry, found
}

// betterKey orders two auths keys that normalise to the same k.
func betterKey(a, b, k string) bool {
	if (a == k) != (b == k) {
		return a == k
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Resolve implements authn.Keychain.
func (k *Keychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), res)
}

// ResolveContext implements authn.ContextKeychain: go-containerregistry passes the request's
// context, so a credential helper that never answers (a keyring waiting for a passphrase on
// a CI machine) gives way to SIGINT, SIGTERM or --timeout.
func (k *Keychain) ResolveContext(ctx context.Context, res authn.Resource) (authn.Authenticator, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	reg := res.RegistryStr()
	target := res.String()
	for _, f := range k.files {
		c, err := k.load(f)
		if err != nil {
			return nil, err
		}
		if c == nil {
			continue
		}
		e, ok := lookup(c, target)
		if !ok {
			continue
		}
		cfg := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("auth file %s (%s): entry for %s has an invalid auth field", f.path, f.origin, reg)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("auth file %s (%s): entry for %s has an invalid auth field", f.path, f.origin, reg)
			}
			cfg.Username, cfg.Password = user, pass
		}
		desc := fmt.Sprintf("%s (%s)", f.path, f.origin)
		// Which file served a registry is said at V(1): kubectl, too, names the kubeconfig
		// it loaded only when asked, and an unattended run's stderr stays one line a step.
		if k.used[reg] != desc {
			k.log.Log(context.Background(), slog.Level(-1), "using registry credentials", "registry", reg, "authFile", f.path, "from", f.origin)
		}
		k.used[reg] = desc
		return authn.FromConfig(cfg), nil
	}
	// No file has a plain entry: docker's credsStore/credHelpers (which run helper
	// binaries) are left to ggcr's default keychain, which reads the same docker config.
	a, err := helperResolve(ctx, res)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("asking the docker credential helper for %s: %w", reg, err)
	}
	if err == nil && a != authn.Anonymous {
		dockerCfg := "docker config.json"
		for _, f := range k.files {
			if f.origin == "docker config.json" {
				dockerCfg = f.path
			}
		}
		k.used[reg] = "a docker credential helper named in " + dockerCfg
		k.log.Log(context.Background(), slog.Level(-1), "using registry credentials", "registry", reg, "authFile", dockerCfg, "from", "docker credential helper")
		return a, nil
	}
	k.used[reg] = ""
	return authn.Anonymous, nil
}

// helperResolve runs the default keychain (and so a docker credential helper) for res, and
// stops waiting for it when ctx ends: the helper runs through docker's credentials client,
// which takes no context, so it is left to finish on its own (its answer is dropped).
func helperResolve(ctx context.Context, res authn.Resource) (authn.Authenticator, error) {
	type answer struct {
		a   authn.Authenticator
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		a, err := authn.DefaultKeychain.Resolve(res)
		ch <- answer{a, err}
	}()
	select {
	case r := <-ch:
		return r.a, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Describe says where credentials for registry came from, for error messages.
func (k *Keychain) Describe(registry string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if d := k.used[registry]; d != "" {
		return "credentials from " + d
	}
	var tried []string
	for _, f := range k.files {
		tried = append(tried, f.path)
	}
	return "no credentials for this registry in any auth file (looked in " + strings.Join(tried, ", ") + "); pass " + option.AuthFile.String()
}

// The keychain is what ggcr asks for credentials.
var _ authn.ContextKeychain = (*Keychain)(nil)

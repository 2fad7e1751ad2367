package testregistry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
)

// The registry serves signatures of everything it holds, made when they are asked for with
// keys generated when the process started (testsign): cosign .sig manifests under each
// image's sha256-<hex>.sig tag and, for release payloads, atomic signatures at a signature
// store's path <anything>/sha256=<hex>/signature-N (MirrorFlags route the real stores here).
// Each tag naming a digest gives one signature claiming <repository>:<tag>; a digest without a
// tag gets one claiming the repository. SetSigning replaces what is served (negative tests).

// Signatures are what the registry serves for one image: the files of a signature store
// (signature-1, -2, …) and the layers of its .sig manifest (none: no .sig tag).
type Signatures struct {
	Atomic [][]byte
	Cosign []testsign.Layer
}

// Signing decides the signatures of repo@digest, whose tags are given (sorted).
type Signing func(repo, digest string, tags []string) Signatures

// DefaultSigning signs as Red Hat and OpenShift CI do, with keys playing theirs: payloads of
// quay.io/openshift-release-dev/ocp-release atomic by keys.Release, registry.ci.openshift.org
// atomic by keys.CI, and every image but the CI ones with cosign by keys.Cosign.
func DefaultSigning(keys *testsign.Keys) Signing {
	return func(repo, digest string, tags []string) Signatures {
		ids := identities(repo, tags)
		var s Signatures
		var gpg = keys.Release
		switch {
		case strings.HasPrefix(repo, "registry.ci.openshift.org/"):
			gpg = keys.CI
		case !strings.HasPrefix(repo, "quay.io/openshift-release-dev/ocp-release"):
			gpg = nil
		}
		for _, id := range ids {
			if gpg != nil {
				b, err := testsign.Atomic(gpg, digest, id)
				if err != nil {
					panic(err)
				}
				s.Atomic = append(s.Atomic, b)
			}
			if !strings.HasPrefix(repo, "registry.ci.openshift.org/") {
				s.Cosign = append(s.Cosign, testsign.Cosign(keys.Cosign, digest, id))
			}
		}
		return s
	}
}

// identities are the docker-references signatures of a digest claim: repo:tag per tag, or the
// repository when no tag names it.
func identities(repo string, tags []string) []string {
	if len(tags) == 0 {
		return []string{repo}
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, repo+":"+t)
	}
	return out
}

// signer is the registry's signature state.
type signer struct {
	keys *testsign.Keys
	dir  string // holds policy.json

	mu      sync.Mutex
	known   map[string]map[string][]string // repo → digest → tags
	pushed  map[string]bool                // repo:tag pushed at run time
	signing Signing
	made    map[string]Signatures // repo@digest → what signing gave
	blobs   map[string]bool       // the layer digests of the .sig manifests served
}

func newSigner(keys *testsign.Keys) (*signer, error) {
	if keys == nil {
		keys = testsign.Shared()
	}
	dir, err := os.MkdirTemp("", "testregistry-policy-")
	if err != nil {
		return nil, err
	}
	if err := keys.WritePolicy(filepath.Join(dir, "policy.json")); err != nil {
		return nil, err
	}
	return &signer{keys: keys, dir: dir, known: map[string]map[string][]string{}, pushed: map[string]bool{}, signing: DefaultSigning(keys), made: map[string]Signatures{}, blobs: map[string]bool{}}, nil
}

// saw records that repo holds digest, under tag when ref is one.
func (s *signer) saw(repo, ref, digest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.known[repo]
	if m == nil {
		m = map[string][]string{}
		s.known[repo] = m
	}
	tags := m[digest]
	if !strings.HasPrefix(ref, "sha256:") && !slices.Contains(tags, ref) {
		tags = append(tags, ref)
		slices.Sort(tags)
	}
	m[digest] = tags
	// a tag moved: it no longer names its old digest
	for d, ts := range m {
		if d != digest {
			m[d] = slices.DeleteFunc(ts, func(t string) bool { return t == ref })
		}
	}
	s.made = map[string]Signatures{}
}

// hasTag reports whether a manifest was pushed to repo under tag at run time (a fixture's
// own .sig tag, which signs nothing, gives way to the signatures signing makes).
func (s *signer) hasTag(repo, tag string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushed[repo+":"+tag]
}

// signatures are what signing gives repo@digest (nil, false when the registry lacks it).
func (s *signer) signatures(repo, digest string) (Signatures, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tags, ok := s.known[repo][digest]
	if !ok {
		return Signatures{}, false
	}
	key := repo + "@" + digest
	if got, ok := s.made[key]; ok {
		return got, true
	}
	got := s.signing(repo, digest, slices.Clone(tags))
	s.made[key] = got
	return got, true
}

// atomic is signature n (1-based) of digest across the repositories holding it.
func (s *signer) atomic(digest string, n int) ([]byte, bool) {
	s.mu.Lock()
	var repos []string
	for repo, m := range s.known {
		if _, ok := m[digest]; ok {
			repos = append(repos, repo)
		}
	}
	s.mu.Unlock()
	slices.Sort(repos)
	var all [][]byte
	for _, repo := range repos {
		sigs, _ := s.signatures(repo, digest)
		all = append(all, sigs.Atomic...)
	}
	if n < 1 || n > len(all) {
		return nil, false
	}
	return all[n-1], true
}

// AdoptPushes makes what was pushed so far count as the registry's fixtures: a .sig tag among
// it (a fixture set's unsigned noise tag, say) gives way to the signatures signing makes, as a
// seeded one does. Pushes after the call are served as they are again (negative tests). The
// bench pushes a generated fixture set and needs it signed as the seeded one is.
func (r *Registry) AdoptPushes() {
	r.sign.mu.Lock()
	defer r.sign.mu.Unlock()
	r.sign.pushed = map[string]bool{}
	r.sign.made = map[string]Signatures{}
}

// SetSigning replaces what the registry serves as signatures (nil: DefaultSigning of its keys).
func (r *Registry) SetSigning(f Signing) {
	r.sign.mu.Lock()
	defer r.sign.mu.Unlock()
	if f == nil {
		f = DefaultSigning(r.sign.keys)
	}
	r.sign.signing = f
	r.sign.made = map[string]Signatures{}
}

// Keys are the keys the registry signs with.
func (r *Registry) Keys() *testsign.Keys { return r.sign.keys }

// SignatureBlob reports whether digest is a layer of a .sig manifest the registry served (a
// signature payload, not an image's blob).
func (r *Registry) SignatureBlob(digest string) bool {
	r.sign.mu.Lock()
	defer r.sign.mu.Unlock()
	return r.sign.blobs[digest]
}

// PolicyFile is a containers-policy.json trusting the registry's keys (Keys.Policy).
func (r *Registry) PolicyFile() string { return filepath.Join(r.sign.dir, "policy.json") }

// SignatureFlags are the lvms-rebase flags that trust the registry's signatures.
func (r *Registry) SignatureFlags() []string { return []string{"--signature-policy", r.PolicyFile()} }

var (
	sigTagPath   = regexp.MustCompile(`^/v2/(.+)/manifests/sha256-([0-9a-f]{64})\.sig$`)
	storeFile    = regexp.MustCompile(`/sha256=([0-9a-f]{64})/signature-([0-9]+)$`)
	manifestPath = regexp.MustCompile(`^/v2/(.+)/manifests/([^/]+)$`)
)

// serveSig answers a .sig tag no one pushed with the signatures signing makes; false when
// the request is not for such a tag.
func (r *Registry) serveSig(w http.ResponseWriter, req *http.Request, inner http.Handler) bool {
	m := sigTagPath.FindStringSubmatch(req.URL.Path)
	if m == nil || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		return false
	}
	repo, digest := m[1], "sha256:"+m[2]
	if r.sign.hasTag(repo, "sha256-"+m[2]+".sig") {
		return false // pushed by a test: served as it is
	}
	sigs, ok := r.sign.signatures(repo, digest)
	if !ok || len(sigs.Cosign) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"unknown tag %s"}]}`, m[2])
		return true
	}
	raw, blobs := testsign.SigManifest(sigs.Cosign)
	r.blobs.mu.Lock()
	for d, b := range blobs {
		r.blobs.mem[d] = b
	}
	r.blobs.mu.Unlock()
	r.sign.mu.Lock()
	for d := range blobs {
		r.sign.blobs[d] = true
	}
	r.sign.mu.Unlock()
	sum := sha256.Sum256(raw)
	w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	w.Header().Set("Docker-Content-Digest", "sha256:"+hex.EncodeToString(sum[:]))
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	// The .sig manifest is then fetchable by digest like any other (a lock records it).
	r.putSigByDigest(inner, repo, raw)
	if req.Method == http.MethodGet {
		_, _ = w.Write(raw)
	}
	return true
}

// putSigByDigest stores a served .sig manifest in the inner registry by digest, so a client
// that recorded its digest (the lock) can fetch it again.
func (r *Registry) putSigByDigest(inner http.Handler, repo string, raw []byte) {
	sum := sha256.Sum256(raw)
	d := "sha256:" + hex.EncodeToString(sum[:])
	sd := &seeder{blobs: r.blobs, handler: inner}
	_ = sd.putRaw(repo, d, raw, "application/vnd.oci.image.manifest.v1+json", "(served .sig)")
}

// serveStore answers a signature store's signature-N of a digest the registry holds.
func (r *Registry) serveStore(w http.ResponseWriter, req *http.Request) bool {
	m := storeFile.FindStringSubmatch(req.URL.Path)
	if m == nil || strings.HasPrefix(req.URL.Path, "/v2/") || req.Method != http.MethodGet {
		return false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		http.NotFound(w, req)
		return true
	}
	b, ok := r.sign.atomic("sha256:"+m[1], n)
	if !ok {
		http.NotFound(w, req)
		return true
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
	return true
}

// recordPush notes a manifest pushed at run time (its repository, tag or digest, and digest).
func (r *Registry) recordPush(req *http.Request, status int, header http.Header) {
	if req.Method != http.MethodPut || status != http.StatusCreated {
		return
	}
	m := manifestPath.FindStringSubmatch(req.URL.Path)
	if m == nil {
		return
	}
	if d := header.Get("Docker-Content-Digest"); d != "" {
		r.sign.saw(m[1], m[2], d)
		r.sign.mu.Lock()
		r.sign.pushed[m[1]+":"+m[2]] = true
		r.sign.mu.Unlock()
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

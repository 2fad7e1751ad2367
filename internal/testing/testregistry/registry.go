// Package testregistry runs a real OCI registry on 127.0.0.1 for tests, demos and
// benchmarks. It serves go-containerregistry's pkg/registry seeded from the generated
// fixture tree (internal/testing/fixtures), with repositories named after their upstream host
// ("HOST/registry.redhat.io/lvms4/lvms-operator-bundle") so a run can point at it with
// --mirror flags. It can require HTTP basic auth, inject faults per request, counts
// requests and bytes per path, paginates tag lists with Link headers, serves the
// snapshot-controller operator tarballs at GitHub's archive path and their files at
// raw.githubusercontent.com's path, serves signatures of everything it holds (cosign .sig
// tags and signature-store files, made with keys generated at run time: signatures.go), and
// can model a slow network (delay, bandwidth cap).
package testregistry

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testsign"
)

// SnapshotArchivePrefix is the URL path prefix under which snapshot-asset tarballs are
// served, mirroring https://github.com/openshift/cluster-csi-snapshot-controller-operator/archive/.
const SnapshotArchivePrefix = "/github.com/openshift/cluster-csi-snapshot-controller-operator/archive/"

// Options configure Start.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port).
	Addr string
	// Username and Password, when Username is set, make every /v2/ request require HTTP
	// basic auth (401 with WWW-Authenticate: Basic otherwise). Snapshot tarballs stay
	// public, as GitHub archives are.
	Username, Password string
	// Fixtures is the tree holding images/ and snapshot-assets/; default DefaultFixtures(),
	// the checkout's testdata/. Use os.DirFS for a generated directory.
	Fixtures fs.FS
	// Logf receives the seeding summary and a line per injected fault; default discards.
	Logf func(format string, args ...any)
	// Network models a distant registry on loopback (zero: none); see SetNetwork.
	Network Network
	// Keys sign what the registry serves (signatures.go); nil: testsign.Shared(), generated
	// once per process.
	Keys *testsign.Keys
}

// Registry is a running loopback registry.
type Registry struct {
	host     string
	srv      *http.Server
	ln       net.Listener
	fixtures fs.FS
	opts     Options
	blobs    *blobStore

	mu       sync.Mutex
	faults   []*activeFault
	stats    map[statKey]*PathStats
	archives map[string][]byte    // snapshot archives added at run time, by commit
	rawFiles map[string]*rawIndex // commit → its archive's files, indexed once
	network  *network
	events   []Event // the timeline since the last ResetStats
	sign     *signer

	closeOnce sync.Once
	closeErr  error
}

// Start seeds a registry from the fixture tree and serves it until Close.
func Start(opts Options) (*Registry, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	fsys := opts.Fixtures
	if fsys == nil {
		var err error
		if fsys, err = DefaultFixtures(); err != nil {
			return nil, err
		}
	}
	blobs := newBlobStore(fsys)
	inner := registry.New(
		registry.WithBlobHandler(blobs),
		// ggcr logs every request; Logf gets seeding summaries and faults only.
		registry.Logger(log.New(io.Discard, "", 0)),
	)
	layouts, err := findLayouts(fsys)
	if err != nil {
		return nil, fmt.Errorf("scanning fixtures for OCI layouts: %w", err)
	}
	if len(layouts) == 0 {
		return nil, errNoLayouts
	}
	sign, err := newSigner(opts.Keys)
	if err != nil {
		return nil, err
	}
	sd := &seeder{fsys: fsys, blobs: blobs, handler: inner, sign: sign}
	start := time.Now()
	for _, dir := range layouts {
		if err := sd.seedLayout(dir); err != nil {
			return nil, err
		}
	}
	opts.Logf("testregistry: seeded %d manifests from %d repositories in %s", sd.count, len(layouts), time.Since(start).Round(time.Millisecond))

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	r := &Registry{host: ln.Addr().String(), ln: ln, fixtures: fsys, opts: opts, stats: map[statKey]*PathStats{}, blobs: blobs, sign: sign,
		archives: map[string][]byte{}, rawFiles: map[string]*rawIndex{}, network: newNetwork(opts.Network)}
	r.srv = &http.Server{Handler: r.handler(inner), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logf("testregistry: serve: %v", err)
		}
	}()
	return r, nil
}

// TB is the part of testing.TB that NewForTest uses. *testing.T and *testing.B satisfy it;
// declaring it here keeps the testing package out of programs that serve fixtures
// (hack/dev-registry, hack/bench).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewForTest starts a registry and closes it when the test ends; it fails the test on error.
func NewForTest(t TB, opts Options) *Registry {
	t.Helper()
	r, err := Start(opts)
	if err != nil {
		t.Fatalf("starting test registry: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Host is "127.0.0.1:PORT".
func (r *Registry) Host() string { return r.host }

// URL is "http://127.0.0.1:PORT".
func (r *Registry) URL() string { return "http://" + r.host }

// MirrorFlags are the lvms-rebase flags that redirect both upstream registries and the
// snapshot-controller operator's raw files here.
func (r *Registry) MirrorFlags() []string {
	return []string{
		"--mirror", "registry.redhat.io=" + r.host + "/registry.redhat.io",
		"--mirror", "quay.io=" + r.host + "/quay.io",
		"--mirror", "registry.ci.openshift.org=" + r.host + "/registry.ci.openshift.org",
		"--mirror", "raw.githubusercontent.com=" + r.host + "/raw.githubusercontent.com",
		"--mirror", "storage.googleapis.com=" + r.host + "/storage.googleapis.com",
		"--mirror", "mirror.openshift.com=" + r.host + "/mirror.openshift.com",
	}
}

// SnapshotAssetsURL is the --snapshot-assets URL template; {commit} is replaced by the
// snapshot-controller operator commit.
func (r *Registry) SnapshotAssetsURL() string {
	return r.URL() + SnapshotArchivePrefix + "{commit}.tar.gz"
}

// Close stops the server and drops open connections.
func (r *Registry) Close() error {
	r.closeOnce.Do(func() {
		r.closeErr = r.srv.Close()
		_ = os.RemoveAll(r.sign.dir)
	})
	return r.closeErr
}

// handler layers, outermost first: the timeline, the network model, counting, faults,
// auth, then routing.
func (r *Registry) handler(inner http.Handler) http.Handler {
	route := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case strings.HasPrefix(req.URL.Path, SnapshotArchivePrefix):
			r.serveSnapshot(w, req)
		case strings.HasPrefix(req.URL.Path, RawFilePrefix):
			r.serveRawFile(w, req)
		case isTagList(req):
			serveTagList(inner, w, req)
		case r.serveStore(w, req), r.serveSig(w, req, inner):
		case req.Method == http.MethodPut:
			sw := &statusWriter{ResponseWriter: w}
			inner.ServeHTTP(sw, req)
			r.recordPush(req, sw.status, w.Header())
		default:
			inner.ServeHTTP(w, req)
		}
	})
	return r.timeline(r.network.handler(r.count(r.inject(r.auth(route)))))
}

func (r *Registry) auth(next http.Handler) http.Handler {
	if r.opts.Username == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/v2") {
			u, p, ok := req.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(r.opts.Username)) != 1 ||
				subtle.ConstantTimeCompare([]byte(p), []byte(r.opts.Password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="lvms-rebase testregistry"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
		}
		next.ServeHTTP(w, req)
	})
}

func (r *Registry) serveSnapshot(w http.ResponseWriter, req *http.Request) {
	name := strings.TrimPrefix(req.URL.Path, SnapshotArchivePrefix)
	commit, ok := strings.CutSuffix(name, ".tar.gz")
	if !ok {
		http.NotFound(w, req)
		return
	}
	data, err := r.snapshotArchive(commit)
	if err != nil {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	if req.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(data)
}

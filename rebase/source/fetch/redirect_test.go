package fetch

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/auth"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// TestRegistryRedirectLoop: a registry answering a tag list, a manifest or a blob with a
// redirect to itself costs a request or two and fails naming the URL and the loop, without
// retries. go-containerregistry's clients follow same-host redirects without a bound: before
// the transport's bound the run asked ~2,400 times a second until --timeout.
func TestRegistryRedirectLoop(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{"tags/list", "/tags/list"},
		{"manifests", "/manifests/"},
		{"blobs", "/blobs/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := testregistry.NewForTest(t, testregistry.Options{})
			p := newPayloadFixture(t, nil, 0)
			reg.Inject(testregistry.Fault{Path: tc.path, Kind: testregistry.FaultRedirect})
			c := streamClient(t, reg, cache.New(t.TempDir()))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			if tc.path == "/tags/list" {
				_, err = c.ListTags(ctx, "quay.io/openshift-release-dev/ocp-release")
			} else {
				_, _, err = c.Extract(ctx, payloadRequest(p.ref, nil), t.TempDir())
			}
			if err == nil || !strings.Contains(err.Error(), "redirect loop") || !strings.Contains(err.Error(), reg.Host()+"/v2/") {
				t.Errorf("%s redirected to itself: %v, want a redirect loop naming the URL", tc.path, err)
			}
			t.Log(err)
			// One redirect answer per request the operation makes (a blob download asks for
			// the config and the top layer at once); nothing retried.
			if n := reg.FaultHits(); n == 0 || n > 4 {
				t.Errorf("%d redirects served, want 1 to 4", n)
			}
		})
	}
}

// TestRedirectToAnotherHostDropsCredentials: a blob redirected to another host (as
// registries send blobs to a CDN) is fetched there without the registry's credentials.
func TestRedirectToAnotherHostDropsCredentials(t *testing.T) {
	reg := testregistry.NewForTest(t, testregistry.Options{Username: "pull", Password: "s3cret-pass"})
	p := newPayloadFixture(t, nil, 0)
	var mu sync.Mutex
	var seen []string
	cdn := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cdn.Serve(l) }()
	t.Cleanup(func() { cdn.Close() })
	// "localhost" is another host than the registry's 127.0.0.1 for every client, and one
	// go-containerregistry's private-address rule lets a redirect reach.
	_, port, _ := net.SplitHostPort(l.Addr().String())
	reg.Inject(testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultRedirect, Location: fmt.Sprintf("http://localhost:%s/cdn/blob", port)})
	authFile := filepath.Join(t.TempDir(), "auth.json")
	cred := base64.StdEncoding.EncodeToString([]byte("pull:s3cret-pass"))
	if err := os.WriteFile(authFile, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host(), cred)), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := auth.New(authFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mirror.Parse("quay.io=" + reg.Host() + "/quay.io")
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Options{Mirrors: []mirror.Mirror{m}, Insecure: []string{reg.Host()}, Keychain: kc,
		Retry: transport.RetryOptions{Attempts: 1, Backoff: time.Millisecond}}, nil)
	if _, _, err := c.Extract(context.Background(), payloadRequest(p.ref, nil), t.TempDir()); err == nil {
		t.Fatal("a blob redirected to a host that answers 404: no error")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect was not followed to the other host")
	}
	for _, a := range seen {
		if a != "" {
			t.Errorf("the other host received Authorization %q", a)
		}
	}
}

// TestFetchURLRedirectLoop: a download URL that redirects to itself fails at once, naming
// the URL (its query redacted) and the loop.
func TestFetchURLRedirectLoop(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	}))
	defer srv.Close()
	_, err := newClient(t, Options{}, nil).FetchURL(context.Background(), srv.URL+"/o/r/archive/x.tar.gz?token=s3cret")
	if err == nil || !strings.Contains(err.Error(), "redirect loop") || !strings.Contains(err.Error(), srv.URL+"/o/r/archive/x.tar.gz") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("FetchURL of a self-redirecting URL: %v, want a redirect loop naming the URL, redacted", err)
	}
	t.Log(err)
	if n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	commitB = "fedcba9876543210fedcba9876543210fedcba98"
)

// TestFetchURLVerifiesBeforeCaching: a corrupted download is retried and never cached (a
// healthy server afterwards serves the next run), an archive of another commit is refused,
// and a bad copy already in the cache is not served.
func TestFetchURLVerifiesBeforeCaching(t *testing.T) {
	good := fixtures.GitHubArchive("op-"+commitA, "")
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)/2] ^= 0xff
	var serve []byte
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		_, _ = w.Write(serve) // a failed write is the client's error to report
	}))
	defer srv.Close()
	u := srv.URL + "/o/op/archive/" + commitA + ".tar.gz"
	o := Options{Cache: cache.New(t.TempDir()), Retry: transport.RetryOptions{Attempts: 2, Backoff: time.Millisecond}}

	serve = corrupt
	if _, err := newClient(t, o, nil).FetchURL(context.Background(), u); err == nil || !strings.Contains(err.Error(), "not a readable archive") {
		t.Fatalf("corrupt archive: err = %v", err)
	}
	if hits != 2 {
		t.Errorf("corrupt archive fetched %d times, want 2 (retried once)", hits)
	}
	serve = good
	rc, err := newClient(t, o, nil).FetchURL(context.Background(), u)
	if err != nil {
		t.Fatalf("healthy server after a corrupt download: %v", err)
	}
	if b, _ := io.ReadAll(rc); !bytes.Equal(b, good) {
		t.Fatal("wrong bytes")
	}
	rc.Close()

	// Another commit's archive under this commit's URL: refused, by top directory and by pax
	// header (which wins over the directory).
	for name, body := range map[string][]byte{
		"top directory": fixtures.GitHubArchive("op-"+commitB, ""),
		"pax header":    fixtures.GitHubArchive("op-"+commitA, commitB),
		"no commit":     fixtures.GitHubArchive("op", ""),
	} {
		serve = body
		u2 := srv.URL + "/o/op2/archive/" + commitA + ".tar.gz?n=" + strings.ReplaceAll(name, " ", "")
		if _, err := newClient(t, Options{}, nil).FetchURL(context.Background(), u2); err == nil || !strings.Contains(err.Error(), commitA) {
			t.Errorf("%s: err = %v, want a refusal naming %s", name, err, commitA)
		}
	}
	serve = fixtures.GitHubArchive("op-"+commitB, commitA)
	if _, err := newClient(t, Options{}, nil).FetchURL(context.Background(), srv.URL+"/x/archive/"+commitA+".tar.gz"); err != nil {
		t.Errorf("pax header naming the commit: %v", err)
	}

	// A corrupt copy cached by an older version is not served: it is downloaded again.
	c := cache.New(t.TempDir())
	s := newClient(t, Options{Cache: c}, nil)
	idx := c.URLPath(u)
	h, _, _ := v1.SHA256(bytes.NewReader(corrupt))
	if _, _, err := c.Put(h, bytes.NewReader(corrupt)); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(idx, []byte(h.String()+"\n")); err != nil {
		t.Fatal(err)
	}
	serve, hits = good, 0
	rc, err = s.FetchURL(context.Background(), u)
	if err != nil {
		t.Fatalf("poisoned cache: %v", err)
	}
	if b, _ := io.ReadAll(rc); !bytes.Equal(b, good) || hits != 1 {
		t.Fatalf("poisoned cache served (hits %d)", hits)
	}
	rc.Close()
}

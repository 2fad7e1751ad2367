package source

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// TestHostileTagLists: a registry whose tags/list never ends (a Link back to the same page,
// endless distinct pages, one page without bounds) fails the listing with a LimitError
// naming the repository, after a bounded number of requests and bytes — never spinning
// until the run's timeout.
func TestHostileTagLists(t *testing.T) {
	const repo = "registry.redhat.io/lvms4/lvms-operator-bundle"
	reg := testregistry.NewForTest(t, testregistry.Options{})
	for _, tc := range []struct {
		name     string
		fault    testregistry.Fault
		opts     func(*Options)
		want     string
		requests int   // exact tags/list requests, when > 0
		maxBytes int64 // bytes served for tags/list at most, when > 0
	}{
		{name: "self link", fault: testregistry.Fault{Kind: testregistry.FaultSelfLink}, want: "pagination loops", requests: 2, maxBytes: 64 << 10},
		{name: "endless pages", fault: testregistry.Fault{Kind: testregistry.FaultEndlessPages}, want: "past 1000 pages", requests: DefaultMaxTagPages, maxBytes: 8 << 20},
		{name: "endless pages over the byte bound", fault: testregistry.Fault{Kind: testregistry.FaultEndlessPages},
			opts: func(o *Options) { o.MaxTagListBytes = 64 << 10 }, want: "tag names exceed 65536 bytes", maxBytes: 256 << 10},
		{name: "huge page", fault: testregistry.Fault{Kind: testregistry.FaultHugeTagList, Size: 256 << 20}, want: "tag list page larger than 16777216 bytes",
			requests: 1}, // streamed: the registry counts its bytes only when the handler ends

	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.ClearFaults()
			reg.ResetStats()
			tc.fault.Path = "/lvms-operator-bundle/tags/list"
			reg.Inject(tc.fault)
			o := fixtureOptions(t, reg)
			if tc.opts != nil {
				tc.opts(&o)
			}
			tags, err := newSource(t, o).ListTags(ctx(t), repo)
			var le *LimitError
			if err == nil || !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "listing tags of "+repo) {
				t.Fatalf("ListTags = %d tags, %v; want a LimitError naming %s: %q", len(tags), err, repo, tc.want)
			}
			st := reg.Stats()
			n, bytes := st.Requests(http.MethodGet, "/tags/list"), st.BytesFor("/tags/list")
			if (tc.requests > 0 && n != tc.requests) || (tc.maxBytes > 0 && bytes > tc.maxBytes) {
				t.Errorf("%d tags/list requests, %d bytes served; want %d requests (0: any), at most %d bytes", n, bytes, tc.requests, tc.maxBytes)
			}
			t.Logf("%s: %v (%d requests, %d bytes)", tc.name, err, n, bytes)
		})
	}
}

// TestHostileDigestMismatch: content that arrives whole but does not match its digest — a
// manifest by digest, a blob — fails at once, naming the reference and both digests; it is
// downloaded once, not once per retry. A manifest over the size bound is not read past it.
func TestHostileDigestMismatch(t *testing.T) {
	cat := fixtureCatalog(t)
	p, ok := cat.NewestPayload("4.18", "x86_64")
	if !ok {
		t.Fatal("catalog has no 4.18 x86_64 payload")
	}
	reg := testregistry.NewForTest(t, testregistry.Options{})
	for _, tc := range []struct {
		name     string
		fault    testregistry.Fault
		path     string // requests counted
		want     []string
		maxBytes int64
	}{
		{name: "wrong manifest", fault: testregistry.Fault{Path: "/manifests/" + p.Digest, Kind: testregistry.FaultWrongDigest, Size: 2 << 20, Count: 1},
			path: "/manifests/" + p.Digest, want: []string{"does not match its digest (not retried)", p.Digest, "sha256:"}, maxBytes: 2<<20 + 4096},
		{name: "wrong manifest over the bound", fault: testregistry.Fault{Path: "/manifests/" + p.Digest, Kind: testregistry.FaultWrongDigest, Size: 1 << 30, Count: 1},
			// Of the 1 GiB offered, what the server wrote before the client hung up (socket
			// buffers included) is far less.
			path: "/manifests/" + p.Digest, want: []string{"manifest larger than 4194304 bytes"}, maxBytes: 32 << 20},
		{name: "corrupt blob", fault: testregistry.Fault{Path: "/blobs/", Kind: testregistry.FaultCorrupt, Count: 1},
			path: "/blobs/", want: []string{"does not match its digest (not retried)", "got", "want"}, maxBytes: 4 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.ClearFaults()
			reg.ResetStats()
			reg.Inject(tc.fault)
			o := fixtureOptions(t, reg)
			_, err := newSource(t, o).FetchPayload(ctx(t), PayloadRef{Arch: "x86_64", Ref: p.Ref, Digest: p.Digest}, t.TempDir())
			if err == nil {
				t.Fatal("FetchPayload succeeded against a registry serving wrong content")
			}
			for _, w := range append(tc.want, "quay.io/openshift-release-dev/ocp-release") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			st := reg.Stats()
			// The fault answers the first matching request; a blob fault fails the first blob,
			// so one request reached it whatever else was fetched in parallel.
			if hits := reg.FaultHits(); hits != 1 {
				t.Errorf("the faulty content was requested %d times, want 1 (no retry at full size)", hits)
			}
			if b := st.BytesFor(tc.path); b > tc.maxBytes {
				t.Errorf("%d bytes served for %s, want at most %d", b, tc.path, tc.maxBytes)
			}
			t.Logf("%v", err)
		})
	}
}

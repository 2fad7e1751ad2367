package fetch

import (
	"net/http"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/auth"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/transport"
)

// newClient builds a Client the way rebase/source does, over base (nil: the default
// transport), with the defaults filled, a fresh cache unless o has one, and no credentials
// of the developer's.
func newClient(t *testing.T, o Options, base http.RoundTripper) *Client {
	t.Helper()
	testregistry.NoCredentials(t)
	o.Retry = o.Retry.WithDefaults()
	if o.Cache == nil {
		o.Cache = cache.New(t.TempDir())
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = extract.DefaultMaxFileSize
	}
	if o.MaxImageSize == 0 {
		o.MaxImageSize = extract.DefaultMaxImageSize
	}
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	if o.MaxTagPages == 0 {
		o.MaxTagPages, o.MaxTagListBytes = transport.DefaultMaxTagPages, transport.DefaultMaxTagListBytes
	}
	var err error
	if o.Keychain == nil {
		if o.Keychain, err = auth.New("", o.Log); err != nil {
			t.Fatal(err)
		}
	}
	o.Transport = transport.New(base, transport.Options{Insecure: o.Insecure, Retry: o.Retry,
		MaxTagListBytes: o.MaxTagListBytes, MaxManifestSize: transport.DefaultMaxManifestSize, Log: o.Log})
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

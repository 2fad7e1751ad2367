package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/fetch"
	"golang.org/x/sync/singleflight"
)

// The Source fetches signatures for rebase/provenance (it implements provenance.Fetcher):
// signature-store files as small URL downloads and cosign .sig manifests as registry pulls,
// through the same transport (retries, size caps, TLS policy, redaction), mirrors and cache as
// the images. A warm cache answers both without a request; offline only the cache does.
// Verifications that ask for the same signature at once share one fetch.
var _ provenance.Fetcher = (*Source)(nil)

// StoreSignature fetches <store>/sha256=<hex>/signature-<n>; a 404 is found=false.
func (s *Source) StoreSignature(ctx context.Context, store, digest string, n int, fresh bool) (data []byte, found, cached bool, err error) {
	key := fmt.Sprintf("store\x00%s\x00%s\x00%d\x00%v", store, digest, n, fresh)
	got, err := shared(ctx, &s.sigs, key, func() (fetch.Small, error) {
		return s.client.FetchSmall(ctx, provenance.StoreURL(store, digest, n), provenance.MaxSignatureSize, fresh)
	})
	return got.Data, got.Found, got.Cached, err
}

// Attachments fetches the cosign signatures attached to repository@digest (its
// sha256-<hex>.sig tag, or the .sig manifest sigDigest); nil when there are none.
func (s *Source) Attachments(ctx context.Context, repository, digest, sigDigest string, fresh bool) (*provenance.Attachments, error) {
	key := fmt.Sprintf("sig\x00%s\x00%s\x00%s\x00%v", repository, digest, sigDigest, fresh)
	a, err := shared(ctx, &s.sigs, key, func() (fetch.Attached, error) {
		return s.client.Attached(ctx, repository, provenance.SigTag(digest), sigDigest, provenance.MaxSignatureSize, fresh)
	})
	if err != nil || !a.Found {
		return nil, err
	}
	out := &provenance.Attachments{Digest: a.Digest, Cached: a.Cached}
	for _, l := range a.Layers {
		out.Layers = append(out.Layers, provenance.Attachment{MediaType: l.MediaType, Digest: l.Digest, Payload: l.Data,
			Signature: l.Annotations[provenance.CosignSignatureAnnotation]})
	}
	return out, nil
}

// shared runs fetch once for the callers that ask for key at the same time. The fetch runs
// under the first caller's context: a caller whose own context is live and who was handed
// that context's end fetches again, once.
func shared[T any](ctx context.Context, g *singleflight.Group, key string, fetch func() (T, error)) (T, error) {
	var v any
	var err error
	for range 2 {
		v, err, _ = g.Do(key, func() (any, error) { return fetch() })
		stopped := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
		if !stopped || ctx.Err() != nil {
			break
		}
	}
	out, _ := v.(T)
	return out, err
}

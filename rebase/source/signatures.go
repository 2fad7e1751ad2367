package source

import (
	"context"

	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

// The Source fetches signatures for rebase/provenance (it implements provenance.Fetcher):
// signature-store files as small URL downloads and cosign .sig manifests as registry pulls,
// through the same transport (retries, size caps, TLS policy, redaction), mirrors and cache as
// the images. A warm cache answers both without a request; offline only the cache does.
var _ provenance.Fetcher = (*Source)(nil)

// StoreSignature fetches <store>/sha256=<hex>/signature-<n>; a 404 is found=false.
func (s *Source) StoreSignature(ctx context.Context, store, digest string, n int, fresh bool) (data []byte, found, cached bool, err error) {
	got, err := s.client.FetchSmall(ctx, provenance.StoreURL(store, digest, n), provenance.MaxSignatureSize, fresh)
	return got.Data, got.Found, got.Cached, err
}

// Attachments fetches the cosign signatures attached to repository@digest (its
// sha256-<hex>.sig tag, or the .sig manifest sigDigest); nil when there are none.
func (s *Source) Attachments(ctx context.Context, repository, digest, sigDigest string, fresh bool) (*provenance.Attachments, error) {
	a, err := s.client.Attached(ctx, repository, provenance.SigTag(digest), sigDigest, provenance.MaxSignatureSize, fresh)
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

package provenance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
)

// searched is what looking for a signature of one candidate digest gave: the signature that
// met the requirement, or what was found instead and the fetches that failed.
type searched struct {
	sig         *Signature
	found       []string
	unreachable []error
	cached      bool // the attachments came from the fetcher's cache
}

// searchEach runs search for every candidate digest of s at once and keeps the first
// candidate's (in order) signature: the written digest's own before its list's.
func searchEach(s Subject, search func(digest string) searched) (*Signature, []string, []error) {
	cands := s.candidates()
	res := make([]searched, len(cands))
	var wg sync.WaitGroup
	for i, d := range cands {
		wg.Go(func() { res[i] = search(d) })
	}
	wg.Wait()
	var found []string
	var unreachable []error
	for _, r := range res {
		if r.sig != nil {
			return r.sig, nil, nil
		}
		found = append(found, r.found...)
		unreachable = append(unreachable, r.unreachable...)
	}
	return nil, found, unreachable
}

// searchAtomic looks for an atomic signature meeting req: the hinted locations first, then for
// each candidate digest each store in order, signature-1, -2, … until one verifies, the store
// answers 404 or MaxSignatures is reached.
func (v *Verifier) searchAtomic(ctx context.Context, s Subject, img Reference, req Requirement, keys []*Key) (*Signature, []string, []error) {
	for _, h := range s.Hints {
		if h.Format != FormatAtomic || h.Store == "" || h.N < 1 {
			continue
		}
		d := s.Digest
		if h.SignedDigest != "" {
			d = h.SignedDigest
		}
		if !slices.Contains(s.candidates(), d) {
			continue
		}
		if sig, _, _ := v.tryStore(ctx, s, img, req, keys, h.Store, d, h.N); sig != nil {
			return sig, nil, nil
		}
	}
	return searchEach(s, func(d string) searched {
		var r searched
		for _, store := range v.stores(s.Repository) {
			for n := 1; ; n++ {
				if n > v.opts.MaxSignatures {
					r.found = append(r.found, fmt.Sprintf("%s: stopped after %d signatures of %s", redact.URL(store), v.opts.MaxSignatures, d))
					break
				}
				sig, why, err := v.tryStore(ctx, s, img, req, keys, store, d, n)
				if sig != nil {
					r.sig = sig
					return r
				}
				if err != nil {
					r.unreachable = append(r.unreachable, err)
					break
				}
				if why == "" { // 404: no signature-n
					break
				}
				r.found = append(r.found, why)
			}
		}
		return r
	})
}

// tryStore fetches and checks one atomic signature. It returns the signature, or why it was
// not accepted ("" when the store has no such signature), or the fetch error.
func (v *Verifier) tryStore(ctx context.Context, s Subject, img Reference, req Requirement, keys []*Key, store, d string, n int) (*Signature, string, error) {
	loc := redact.URL(StoreURL(store, d, n))
	var data []byte
	var err error
	for _, fresh := range []bool{false, true} {
		var ok, cached bool
		data, ok, cached, err = v.fetch.StoreSignature(ctx, store, d, n, fresh)
		if err != nil {
			return nil, "", fmt.Errorf("signature store %s: %w", loc, err)
		}
		if !ok {
			return nil, "", nil
		}
		var c claim
		var k *Key
		if c, k, err = verifyAtomic(data, keys, v.opts.Now()); err == nil {
			err = check(c, d, s, img, req)
		}
		if err == nil {
			sig := signature(FormatAtomic, k, c, s, d)
			sig.Store, sig.N, sig.SHA256 = redact.Strip(store), n, sha256Hex(data)
			return sig, "", nil
		}
		if !cached {
			break
		}
	}
	return nil, fmt.Sprintf("%s: %v", loc, err), nil
}

// StoreURL is where a store keeps signature n of digest: <store>/sha256=<hex>/signature-<n>.
func StoreURL(store, digest string, n int) string {
	return fmt.Sprintf("%s/%s/signature-%d", strings.TrimSuffix(store, "/"), strings.Replace(digest, ":", "=", 1), n)
}

// searchCosign looks for a cosign signature meeting req among the layers of each candidate
// digest's .sig manifest (a hinted .sig manifest, by digest, first).
func (v *Verifier) searchCosign(ctx context.Context, s Subject, img Reference, req Requirement, keys []*Key) (*Signature, []string, []error) {
	for _, h := range s.Hints {
		d := s.Digest
		if h.SignedDigest != "" {
			d = h.SignedDigest
		}
		if h.Format != FormatCosign || h.Sig == "" || !slices.Contains(s.candidates(), d) {
			continue
		}
		if r := v.tryAttachments(ctx, s, img, req, keys, d, h.Sig); r.sig != nil {
			return r.sig, nil, nil
		}
	}
	return searchEach(s, func(d string) searched { return v.tryAttachments(ctx, s, img, req, keys, d, "") })
}

// tryAttachments checks the layers of digest d's .sig manifest (by tag, or by sigDigest); a
// cached manifest none of whose layers is accepted is fetched again.
func (v *Verifier) tryAttachments(ctx context.Context, s Subject, img Reference, req Requirement, keys []*Key, d, sigDigest string) searched {
	r := v.checkAttachments(ctx, s, img, req, keys, d, sigDigest, false)
	if r.sig == nil && r.cached {
		return v.checkAttachments(ctx, s, img, req, keys, d, sigDigest, true)
	}
	return r
}

func (v *Verifier) checkAttachments(ctx context.Context, s Subject, img Reference, req Requirement, keys []*Key, d, sigDigest string, fresh bool) searched {
	var r searched
	loc := img.Repo + ":" + sigTag(d)
	att, err := v.fetch.Attachments(ctx, s.Repository, d, sigDigest, fresh)
	if err != nil {
		r.unreachable = append(r.unreachable, fmt.Errorf("%s: %w", loc, err))
		return r
	}
	if att == nil {
		return r
	}
	r.cached = att.Cached
	for i, l := range att.Layers {
		where := fmt.Sprintf("%s (%s) layer %d", loc, att.Digest, i+1)
		if l.MediaType != CosignPayloadMediaType {
			r.found = append(r.found, fmt.Sprintf("%s: media type %q, not a simple-signing payload", where, l.MediaType))
			continue
		}
		c, k, err := verifyCosign(l.Payload, l.Signature, keys)
		if err == nil {
			err = check(c, d, s, img, req)
		}
		if err != nil {
			r.found = append(r.found, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		r.sig = signature(FormatCosign, k, c, s, d)
		r.sig.Sig, r.sig.Layer, r.sig.SHA256 = att.Digest, i+1, sha256Hex(l.Payload)
		return r
	}
	if len(att.Layers) == 0 {
		r.found = append(r.found, fmt.Sprintf("%s (%s): no layers", loc, att.Digest))
	}
	return r
}

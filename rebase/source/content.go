package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/fetch"
)

// Content is what resolution read from the images it chose, parsed once by the packages
// that own the formats (rebase/bundle, rebase/payload), so the run's later steps neither
// download nor parse anything again.
type Content struct {
	// Bundle is the bundle as rebase/bundle loaded it; BundleStats what fetching it cost.
	Bundle      *bundle.Bundle
	BundleStats FetchStats
	// Payloads are, per MicroShift arch, the payload's release-manifests/ as rebase/payload
	// loaded them; PayloadStats what fetching each cost.
	Payloads     map[string]*payload.Payload
	PayloadStats map[string]FetchStats

	mu sync.Mutex // the arches load in parallel
}

func newContent() *Content {
	return &Content{Payloads: map[string]*payload.Payload{}, PayloadStats: map[string]FetchStats{}}
}

// loadBundle extracts b's manifests/ and metadata/ into a scratch directory and loads them
// with rebase/bundle; the directory is gone when it returns.
func (s *Source) loadBundle(ctx context.Context, b BundleRef) (*bundle.Bundle, *FetchStats, error) {
	dir, err := os.MkdirTemp("", "lvms-rebase-bundle-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	st, err := s.FetchBundle(ctx, b, dir)
	if err != nil {
		return nil, nil, err
	}
	loaded, err := bundle.LoadFS(safefile.FS(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("bundle %s: %w", b.Ref, err)
	}
	return loaded, st, nil
}

// loadPayload extracts p's release-manifests/ into a scratch directory and loads them with
// rebase/payload; it also returns the single-arch image read. early (optional) hears the
// image-references as soon as extraction has written it (ResolvePayloadsEarly).
func (s *Source) loadPayload(ctx context.Context, p PayloadRef, early EarlyReferences) (*payload.Payload, *FetchStats, *fetch.Image, error) {
	dir, err := os.MkdirTemp("", "lvms-rebase-payload-"+p.Arch+"-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(dir)
	st, img, err := s.fetchPayload(ctx, p, dir, earlyFile(dir, p.Arch, early))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("payload for %s: %w", p.Arch, err)
	}
	loaded, err := payload.LoadFS(safefile.FS(filepath.Join(dir, payload.Dir)))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("payload %s (%s): %w", p.Ref, p.Arch, err)
	}
	return loaded, st, img, nil
}

func (c *Content) setPayload(arch string, p *payload.Payload, st *FetchStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Payloads[arch], c.PayloadStats[arch] = p, *st
}

// earlyFile is the extraction's OnFile that hands the image-references to early, once.
func earlyFile(dir, arch string, early EarlyReferences) func(string) {
	if early == nil {
		return nil
	}
	var once sync.Once
	return func(p string) {
		if p != ImageReferencesFile {
			return
		}
		once.Do(func() {
			data, err := safefile.ReadIn(dir, p, 0)
			if err != nil {
				return
			}
			if refs, err := payload.ParseImageReferences(data); err == nil {
				early(arch, refs)
			}
		})
	}
}

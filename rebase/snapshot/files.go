package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// DefaultConcurrency bounds the parallel requests of a per-file source.
const DefaultConcurrency = 8

// Needed lists, sorted, the repository-relative files the embedded patches.yaml reads for
// era e: every rule's source, the webhook pieces only when the era ships the webhook. This is
// what a per-file source fetches, so patches.yaml stays the one place that says which
// upstream files a rebase depends on.
func Needed(e era.Era) ([]string, error) {
	p, err := DefaultPatches()
	if err != nil {
		return nil, err
	}
	return p.Needed(e), nil
}

// Needed lists, sorted and without duplicates, the sources these patches read for era e.
func (p *Patches) Needed(e era.Era) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Files {
		if (f.Webhook && !e.SnapshotWebhook) || seen[f.Source] {
			continue
		}
		seen[f.Source] = true
		out = append(out, f.Source)
	}
	sort.Strings(out)
	return out
}

// FileURL expands a per-file source template for one file.
func FileURL(source, commit, path string) string {
	return strings.NewReplacer(CommitPlaceholder, commit, PathPlaceholder, path).Replace(source)
}

// loadFiles fetches o.Paths from a per-file URL template, in parallel (bounded). Each file is
// one request whose URL names the commit, so rebase/source caches it by commit and path.
func loadFiles(ctx context.Context, source string, o LoadOptions) (*Assets, error) {
	a := &Assets{Commit: o.Commit, Source: redact.URL(source), Files: map[string][]byte{}}
	if o.Fetch == nil {
		return nil, fmt.Errorf("snapshot assets %s: no fetch function for a URL source", a.Source)
	}
	if len(o.Paths) == 0 {
		return nil, fmt.Errorf("snapshot assets %s (commit %s): a per-file source needs the paths to read (snapshot.Needed)", a.Source, o.Commit)
	}
	limit := o.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, p := range o.Paths {
		if !wanted(p) {
			return nil, fmt.Errorf("snapshot assets %s (commit %s): %s is not an assets/ file the translation may read", a.Source, o.Commit, p)
		}
		g.Go(func() error {
			data, err := fetchFile(gctx, o.Fetch, FileURL(source, o.Commit, p))
			if err != nil {
				return fmt.Errorf("snapshot assets (commit %s): file %s: %w", o.Commit, p, err)
			}
			mu.Lock()
			a.Files[p] = data
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return a, nil
}

// fetchFile reads one file, failing (not truncating) past MaxFileBytes.
func fetchFile(ctx context.Context, fetch FetchFunc, url string) ([]byte, error) {
	rc, err := fetch(ctx, url)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", redact.URL(url), err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than the %d-byte limit of one asset file", redact.URL(url), MaxFileBytes)
	}
	return data, nil
}

// keep narrows a whole-tree read to paths; a missing one is an error naming it.
func (a *Assets) keep(paths []string) error {
	kept := make(map[string][]byte, len(paths))
	var missing []string
	for _, p := range paths {
		data, ok := a.Files[p]
		if !ok {
			missing = append(missing, p)
			continue
		}
		kept[p] = data
	}
	if len(missing) > 0 {
		return fmt.Errorf("snapshot assets %s (commit %s): missing %s", a.Source, a.Commit, strings.Join(missing, ", "))
	}
	a.Files = kept
	return nil
}

// FileDigest is the sha256 (hex) of one asset file, as recorded in the lock.
type FileDigest struct {
	Path   string
	SHA256 string
}

// Digests returns the sha256 of every file, sorted by path.
func (a *Assets) Digests() []FileDigest {
	out := make([]FileDigest, 0, len(a.Files))
	for _, p := range a.Paths() {
		sum := sha256.Sum256(a.Files[p])
		out = append(out, FileDigest{Path: p, SHA256: hex.EncodeToString(sum[:])})
	}
	return out
}

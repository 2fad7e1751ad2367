package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// DefaultConcurrency bounds the parallel requests of a per-file source.
const DefaultConcurrency = 8

// source is one file of the operator repository the translation reads. The MicroShift file
// name of each object in it is not here: it is render's (render.SnapshotFile, the one table of
// the snapshot controller's file names, which also names the rendered files). What MicroShift
// changes in the objects is not here either: the era's kustomize overlay
// (overlays/csi-snapshot-controller/<era>/) patches them.
type source struct {
	// Path is the repository-relative path of the operator file.
	Path string
	// Multi marks a multi-document source; any other holds exactly one object.
	Multi bool
	// Keep also ships a multi-document source whole, under this MicroShift file name, with
	// its documents in source order.
	Keep string
	// Webhook marks validation-webhook pieces, shipped only when the era has the webhook
	// (era.SnapshotWebhook).
	Webhook bool
}

// sources is the one table of the operator files a rebase reads: Translate follows it and
// Needed lists it, so a per-file source fetches exactly what the translation reads.
// MicroShift's rebase.sh copies the same files (its assets.yaml csi entry).
var sources = []source{
	{Path: "assets/volumesnapshotclasses.yaml"},
	{Path: "assets/volumesnapshotcontents.yaml"},
	{Path: "assets/volumesnapshots.yaml"},
	{Path: "assets/serviceaccount.yaml"},
	// A multi-document file: one MicroShift file per object (the era says which kinds get a
	// file of their own, era.SnapshotSplit), and the whole file kept as MicroShift ships it
	// too (its recipe copies it; the split files are "extracted").
	{Path: "manifests/05_operand_rbac.yaml", Multi: true, Keep: "05_operand_rbac.yaml"},
	{Path: "assets/csi_controller_deployment.yaml"},
	{Path: "assets/webhook_serviceaccount.yaml", Webhook: true},
	{Path: "assets/rbac/webhook_clusterrole.yaml", Webhook: true},
	{Path: "assets/rbac/webhook_clusterrolebinding.yaml", Webhook: true},
	{Path: "assets/webhook_service.yaml", Webhook: true},
	{Path: "assets/webhook_config.yaml", Webhook: true},
	{Path: "assets/webhook_deployment.yaml", Webhook: true},
}

// Needed lists, sorted, the repository-relative files the translation reads for era e:
// every source, the webhook pieces only when the era ships the webhook. This is what a
// per-file source fetches.
func Needed(e era.Era) ([]string, error) {
	var out []string
	for _, s := range sources {
		if s.Webhook && !e.SnapshotWebhook {
			continue
		}
		out = append(out, s.Path)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
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
	// safefile: a download, bounded by MaxFileBytes.
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

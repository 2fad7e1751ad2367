package fetch

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/lvms-rebase/lvms-rebase/rebase/source/cache"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/mirror"
	"github.com/lvms-rebase/lvms-rebase/rebase/source/tags"
)

// ListTags lists a repository's tags (every page), from the cache's record when offline.
func (c *Client) ListTags(ctx context.Context, repository string) ([]string, error) {
	r, err := parseRepo(repository)
	if err != nil {
		return nil, err
	}
	return c.listTags(ctx, r)
}

func (c *Client) listTags(ctx context.Context, r imgRef) ([]string, error) {
	if r.oci {
		l, err := c.layout(r.repo)
		if err != nil {
			return nil, err
		}
		return l.tags(), nil
	}
	if c.opts.Offline {
		rec, err := c.cache.ReadTags(r.repo)
		if err != nil {
			return nil, err
		}
		if len(rec.Tags) == 0 {
			return nil, fmt.Errorf("tags of %s are not in the cache %s (offline)", r.repo, c.cache.Dir())
		}
		return rec.Tags, nil
	}
	loc := mirror.Rewrite(c.opts.Mirrors, r.repo)
	repo, err := name.NewRepository(loc, c.nameOpts(loc)...)
	if err != nil {
		return nil, err
	}
	// One listing per repository and run: choosing the LVMS minor and resolving the bundle
	// both read the bundle repository's tags, and so do the branches of a multi-branch run,
	// which may ask at the same time (the first lists, the others wait for its answer).
	v, _ := c.tagLists.LoadOrStore(loc, &tagList{})
	tl := v.(*tagList)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.done {
		return slices.Clone(tl.tags), nil
	}
	var tags []string
	err = c.attempt(ctx, "listing tags of "+loc, func() error {
		t, err := c.listAllTags(ctx, repo)
		tags = t
		return err
	})
	if err != nil {
		return nil, c.explain(err, "listing tags of "+r.repo, loc)
	}
	sort.Strings(tags)
	tl.tags, tl.done = slices.Clone(tags), true
	if err := c.cache.UpdateTags(r.repo, func(t *cache.TagRecord) { t.Tags = tags }); err != nil {
		c.log.Warn("cannot record tags in cache", "repo", r.repo, "error", err)
	}
	return tags, nil
}

// tagList is one repository's memoised listing; a failed listing is retried by the next
// caller.
type tagList struct {
	mu   sync.Mutex
	done bool
	tags []string
}

// unknownTag explains a 404 on a tag with the nearest existing tags.
func (c *Client) unknownTag(ctx context.Context, r imgRef, cause error) error {
	have, err := c.listTags(ctx, imgRef{canonical: r.repo, repo: r.repo})
	if err != nil || len(have) == 0 {
		return fmt.Errorf("%s: tag %q not found: %w", r, r.tag, cause)
	}
	return fmt.Errorf("%s: tag %q not found; nearest tags: %s", r, r.tag, strings.Join(tags.Nearest(r.tag, have, 5), ", "))
}

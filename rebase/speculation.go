package rebase

import (
	"context"
	"sync"

	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// speculation is the snapshot work (files, translation, rendered tree) done at the commit the
// first arch's image-references named while its payload was still downloading, before that
// copy was verified: the commit is in the payload layer's first file, so the snapshot files
// need not wait for the layer's last byte. The work is used only when the verified payloads
// name the same commit; otherwise it is dropped and done again at the verified one.
type speculation struct {
	once   sync.Once
	commit string
	steps  *snapshotSteps
}

// early is the resolution's EarlyReferences: the first arch's commit starts the snapshot
// steps, on the lanes' wait group.
func (s *speculation) early(ctx context.Context, r *runner, l *lanes) source.EarlyReferences {
	return func(arch string, refs *payload.ImageStream) {
		commit, err := refs.SnapshotOperatorCommit()
		if arch != r.arches[0] || err != nil {
			return // the verified payloads report it
		}
		s.once.Do(func() {
			st := newSnapshotSteps()
			s.commit, s.steps = commit, &st
			l.wg.Add(1) // the payload lane, still running, holds the group above zero
			go func() {
				defer l.wg.Done()
				r.snapshotSteps(ctx, l, commit, st)
			}()
		})
	}
}

// at returns the speculation's steps when they are at commit (verified), else nil; no
// speculation starts after it.
func (s *speculation) at(commit string) *snapshotSteps {
	s.once.Do(func() {})
	if s.steps != nil && s.commit == commit {
		return s.steps
	}
	return nil
}

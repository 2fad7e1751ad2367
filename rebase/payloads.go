package rebase

import (
	"context"
	"errors"
	"fmt"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// fetched is the fetch-payloads step's output: the payload half of the resolution, each
// arch's release-manifests parsed, the version release.base names, and the
// snapshot-controller operator commit the payloads name.
type fetched struct {
	res      *source.Resolution
	payloads map[string]*payload.Payload
	version  string
	commit   string
	// lockDrift is set with --check when the lock's own pins are the cause of a failure.
	lockDrift []string
}

// fetchPayloads resolves the payloads (release tags, manifests, config and top layer of each
// arch, the layer extracted while it downloads) and reads the snapshot commit they name. early
// hears the commit the first arch's image-references names as soon as it has streamed in,
// before its layer verified (the snapshot steps start on it).
func (r *run) fetchPayloads(ctx context.Context, s *graph.Step, early func(commit string)) (fetched, error) {
	s.Fetch("the payloads of OpenShift " + r.opts.OCP)
	var f fetched
	var err error
	heard := func(arch string, refs *payload.ImageStream) {
		if commit, err := refs.SnapshotOperatorCommit(); err == nil && arch == r.arches[0] {
			early(commit)
		}
	}
	if f.res, err = r.src.ResolvePayloadsEarly(ctx, r.opts.OCP, heard); err != nil {
		f.lockDrift, err = r.pinsDisagree(err)
		return f, err
	}
	// The source logged these as it found them.
	for _, w := range f.res.Warnings {
		s.Record(w)
	}
	if f.payloads, f.version, err = loaded(f.res); err != nil {
		return f, err
	}
	f.commit, err = r.commitOf(s, f.res)
	return f, err
}

// loaded takes every arch's release-manifests resolution read, and the payload version:
// release.base comes from release-x86_64.json, so its payload names it (nightly pairs have a
// version per arch; each is in the lock's payloads).
func loaded(res *source.Resolution) (map[string]*payload.Payload, string, error) {
	if res.Content == nil {
		return nil, "", errors.New("the resolution holds no payload content (it did not come from source.Resolve)")
	}
	out := map[string]*payload.Payload{}
	version := ""
	for _, p := range res.Payloads {
		l, ok := res.Content.Payloads[p.Arch]
		if !ok || l == nil {
			return nil, "", fmt.Errorf("payload %s (%s): resolution kept no content for this arch", p.Ref, p.Arch)
		}
		out[p.Arch] = l
		if version == "" || p.Arch == "x86_64" {
			version = l.Version()
		}
	}
	return out, version, nil
}

// commitOf is the snapshot-controller operator commit of the first payload, with a warning
// for each other payload that names another.
func (r *run) commitOf(s *graph.Step, res *source.Resolution) (string, error) {
	refs := res.Payloads
	if len(refs) == 0 {
		return "", errors.New("the resolution holds no payload")
	}
	commit, err := res.Content.Payloads[refs[0].Arch].SnapshotOperatorCommit()
	if err != nil {
		return "", fmt.Errorf("payload %s: %w", refs[0].Ref, err)
	}
	for _, p := range refs[1:] {
		if c, err := res.Content.Payloads[p.Arch].SnapshotOperatorCommit(); err == nil && c != commit {
			s.Warn(fmt.Sprintf("payloads disagree on the %s commit: %s has %s, %s has %s; using %s",
				payload.SnapshotOperatorTag, refs[0].Arch, commit, p.Arch, c, commit))
		}
	}
	return commit, nil
}

// joined is the whole resolution, bundle and payloads, with the LVMS choice and the payload
// rule.
func (r *run) joined(b resolved, p fetched) *source.Resolution {
	res := b.res.Join(p.res)
	choice := b.choice
	res.LVMS = &choice
	if r.payloadRule != "" {
		res.PayloadRule = r.payloadRule
	}
	return res
}

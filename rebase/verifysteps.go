package rebase

import (
	"context"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// The verification steps (verify.go has the verification itself): verify-bundle and
// verify-payloads start the signature checks as soon as resolution and the payloads' fetch
// have the digests; provenance records what proved every digest the run writes, before the
// records step builds the lock and anything is written.

// verifyBundle checks the signatures of the bundle and of every image it relates as soon as
// resolution has their digests; the provenance step records them.
func (r *run) verifyBundle(ctx context.Context, s *graph.Step, b resolved) (struct{}, error) {
	if r.verification.skip != "" {
		return struct{}{}, nil
	}
	s.Fetch("the signatures of the bundle " + b.res.Bundle.Ref + " and its images")
	_, err := r.verification.check(ctx, append([]provenance.Subject{bundleSubject(b.res.Bundle)}, relatedSubjects(b.res)...))
	return struct{}{}, err
}

// verifyPayloads checks the payloads' signatures as soon as resolution has their digests.
func (r *run) verifyPayloads(ctx context.Context, s *graph.Step, p fetched) (struct{}, error) {
	if r.verification.skip != "" {
		return struct{}{}, nil
	}
	s.Fetch("the signatures of the payloads " + payloadRefs(p.res))
	_, err := r.verification.check(ctx, payloadSubjects(p.res))
	// Most of the work began in the background while the payloads downloaded (earlyPayloads):
	// the step reports it, not only the wait for what was left.
	for _, sp := range r.verification.backgroundSpans() {
		s.Worked(sp[0], sp[1])
	}
	return struct{}{}, err
}

// proven is the provenance step's output: the images step's, and the report of what proved
// every digest the run writes (nil when --check verified none).
type proven struct {
	im     imaged
	report *provenance.Report
}

// provenance records, for every digest the run writes or uses, what proved it — the
// verifications the verify steps started are done or under way, and each digest is verified
// once; a digest without an accepted signature stops the run here, before anything is written.
func (r *run) provenance(ctx context.Context, s *graph.Step, b resolved, p fetched, im imaged, _, _ struct{}) (proven, error) {
	out := proven{im: im}
	x := r.verification
	if x.skip != "" {
		s.Warn(x.skip)
		return out, nil
	}
	s.Fetch("signatures")
	rep, err := x.report(ctx, r.joined(b, p), im.lock, r.arches)
	for _, w := range x.v.Warnings() {
		s.Warn(w)
	}
	if err != nil {
		return out, err
	}
	for _, w := range provenanceWarnings(rep) {
		s.Warn(w)
	}
	out.report = rep
	return out, nil
}

// payloadRefs lists the payload references, for messages.
func payloadRefs(res *source.Resolution) string {
	var refs []string
	for _, p := range res.Payloads {
		refs = append(refs, p.Ref)
	}
	return strings.Join(refs, ", ")
}

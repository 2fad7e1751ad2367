package rebase

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// Every digest a run writes or uses is proven by a signature its policy accepts before
// anything is written (rebase/provenance): the bundle (its cosign signature naming the tag
// resolution chose), each arch's payload (an atomic signature from the signature stores naming
// a tag of its version), and each image of the bundle written into release-<arch>.json (per-arch
// digest, or the list it was chosen from). The images a payload names by digest are covered by
// the payload's signature and recorded as such. The steps verify-bundle and verify-payloads
// fetch the signatures as soon as resolution has the digests, overlapping the payloads'
// download and the rendering; the provenance step (which the lock's records step waits for)
// then records every digest the images step wrote, each verified once (the verifier remembers).

// verification is a run's signature check.
type verification struct {
	v *provenance.Verifier
	// skip says why nothing is verified (--check of a lock that records no provenance).
	skip string
	// hints are the old lock's signatures by "image@digest" (--check reads what it recorded).
	hints map[string][]provenance.Signature
	// allow says unsigned digests are accepted (the option, or the lock's with --check).
	allow bool
	// limit bounds the verifications under way.
	limit chan struct{}
	// background verifications (earlyPayloads) and how to stop them.
	wg      sync.WaitGroup
	mu      sync.Mutex
	cancels []context.CancelFunc
	spans   [][2]time.Time // when each background verification worked
}

// newVerification loads the policy and builds the verifier. With --check it verifies as the
// lock's run did (its allowance of unsigned digests, the locations it recorded) — or, for a lock
// written before signatures were verified, not at all, and says so.
func newVerification(opts Options, src *source.Source, old *lock.Lock) (*verification, error) {
	x := &verification{limit: make(chan struct{}, max(src.Concurrency(), 1)), hints: map[string][]provenance.Signature{}}
	po := provenance.Options{AllowUnsigned: opts.Provenance.AllowUnsigned, Stores: opts.Provenance.Stores}
	if opts.Mode == ModeCheck && old != nil {
		if old.Provenance == nil {
			x.skip = fmt.Sprintf("the lock file %s records no provenance (written before lvms-rebase verified signatures): %s verifies no signature; a rebase records them", lock.Path, option.Check)
			return x, nil
		}
		po.AllowUnsigned = po.AllowUnsigned || old.Provenance.AllowUnsigned
		for _, rec := range old.Provenance.Records {
			x.hints[rec.Image+"@"+rec.Digest] = append(x.hints[rec.Image+"@"+rec.Digest], rec.Signatures...)
		}
	}
	if f := opts.Provenance.PolicyFile; f != "" {
		p, err := provenance.LoadPolicy(f)
		if err != nil {
			return nil, &option.PathError{Option: option.SignaturePolicy, Path: f, Err: err}
		}
		po.Policy = p
	}
	v, err := provenance.New(po, src)
	if err != nil {
		return nil, err
	}
	x.v, x.allow = v, po.AllowUnsigned
	return x, nil
}

func (x *verification) hinted(s provenance.Subject) provenance.Subject {
	s.Hints = x.hints[s.Repository+"@"+s.Digest]
	return s
}

// verifyAll verifies every subject (in parallel, bounded) and returns their records in order,
// or every failure, joined in order.
func (x *verification) verifyAll(ctx context.Context, subjects []provenance.Subject) ([]provenance.Record, error) {
	recs := make([]provenance.Record, len(subjects))
	errs := make([]error, len(subjects))
	var wg sync.WaitGroup
	for i, s := range subjects {
		wg.Go(func() {
			select {
			case x.limit <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-x.limit }()
			recs[i], errs[i] = x.v.Verify(ctx, x.hinted(s))
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return recs, errors.Join(errs...)
}

// bundleTagRE is a bundle version tag, vX.Y.Z[-N].
var bundleTagRE = regexp.MustCompile(`^v(\d+\.\d+\.\d+)(-\d+)?$`)

// bundleSubject is the bundle: its signature must name the tag resolution chose, or, for a
// bundle pinned by digest alone, a version tag of its CSV's version.
func bundleSubject(b source.BundleRef) provenance.Subject {
	s := provenance.Subject{Role: "bundle", Ref: b.Ref, Repository: source.Repository(b.Ref), Digest: b.Digest}
	if r, err := provenance.ParseReference(b.Ref); err == nil && r.Tag != "" {
		tag := r.Tag
		s.Version = &provenance.VersionRule{Want: "the tag " + tag, Accept: func(t string) bool { return t == tag }}
	} else {
		csv := b.CSVVersion
		s.Version = &provenance.VersionRule{Want: "a tag vX.Y.Z[-N] of version " + csv, Accept: func(t string) bool {
			m := bundleTagRE.FindStringSubmatch(t)
			return m != nil && m[1] == csv
		}}
	}
	return s
}

// payloadSubjects are the payloads of a resolution (payloadSubject).
func payloadSubjects(res *source.Resolution) []provenance.Subject {
	var out []provenance.Subject
	for _, p := range res.Payloads {
		out = append(out, payloadSubject(p))
	}
	return out
}

// payloadSubject is one payload: its signature must name a tag of the payload's version for its
// arch (X.Y.Z-<arch>, X.Y.Z-multi, a nightly's version), or the tag it was pulled by; the list a
// -multi payload was narrowed from may be the one signed.
func payloadSubject(p source.PayloadRef) provenance.Subject {
	s := provenance.Subject{Role: "payload " + p.Arch, Ref: p.Ref, Repository: source.Repository(p.Ref), Digest: p.Digest}
	if p.ListDigest != "" && p.ListDigest != p.Digest {
		s.Alternates = []string{p.ListDigest}
	}
	pulled := ""
	if r, err := provenance.ParseReference(p.Ref); err == nil {
		pulled = r.Tag
	}
	repo := s.Repository
	s.Version = &provenance.VersionRule{Want: fmt.Sprintf("a tag of version %s for %s", p.Version, p.Arch), Accept: func(t string) bool {
		v, err := source.PayloadTagVersion(repo+":"+t, p.Arch)
		return (t == pulled && t != "") || (err == nil && v != "" && v == p.Version)
	}}
	return s
}

// earlyPayloads starts verifying a payload's signatures as soon as its digest is known
// (source.Options.OnPayloadDigest), while its layers download: the signature round trip then
// overlaps the payload's bytes instead of following them, and verify-payloads finds it done. Only
// a payload pulled by a tag that names its version is verified this early (the version rule
// needs the version; resolution then checks the tag against release-metadata); the others wait
// for verify-payloads.
type earlyPayloads struct {
	mu sync.Mutex
	x  *verification
}

func (e *earlyPayloads) set(x *verification) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.x = x
}

func (e *earlyPayloads) heard(ctx context.Context, arch, ref, digest, list string) {
	e.mu.Lock()
	x := e.x
	e.mu.Unlock()
	if x == nil || x.skip != "" {
		return
	}
	v, err := source.PayloadTagVersion(ref, arch)
	if err != nil || v == "" {
		return
	}
	x.background(ctx, payloadSubject(source.PayloadRef{Arch: arch, Ref: ref, Digest: digest, ListDigest: list, Version: v}))
}

// background verifies s while the run goes on; the verifier remembers the outcome for the step
// that needs it. stop ends what is still under way.
func (x *verification) background(ctx context.Context, s provenance.Subject) {
	ctx, cancel := context.WithCancel(ctx)
	x.mu.Lock()
	x.cancels = append(x.cancels, cancel)
	x.mu.Unlock()
	x.wg.Go(func() {
		defer cancel()
		select {
		case x.limit <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-x.limit }()
		began := time.Now()
		_, _ = x.v.Verify(ctx, x.hinted(s))
		x.mu.Lock()
		x.spans = append(x.spans, [2]time.Time{began, time.Now()})
		x.mu.Unlock()
	})
}

// backgroundSpans are when the background verifications that ended worked.
func (x *verification) backgroundSpans() [][2]time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.spans)
}

// stop cancels the background verifications and waits for them: a run returns only after them.
func (x *verification) stop() {
	if x == nil {
		return
	}
	x.mu.Lock()
	for _, c := range x.cancels {
		c()
	}
	x.mu.Unlock()
	x.wg.Wait()
}

// relatedSubjects are the bundle's relatedImages per arch, as resolution found them (what the
// provenance phase verifies again by the keys they are written under: imageSubjects).
func relatedSubjects(res *source.Resolution) []provenance.Subject {
	var out []provenance.Subject
	for _, ri := range res.RelatedImages {
		for _, a := range ri.Arches {
			out = append(out, imageSubject(ri.Name+" "+a.Arch, source.Repository(ri.Image), a.Digest, ri.ListDigest))
		}
	}
	return out
}

func imageSubject(role, repo, digest, list string) provenance.Subject {
	s := provenance.Subject{Role: role, Repository: repo, Digest: digest}
	if list != "" && list != digest {
		s.Alternates = []string{list}
	}
	return s
}

// imageSubjects are the bundle's images the run writes into release-<arch>.json, per arch.
func imageSubjects(images []lock.ImageDigests, arches []string) []provenance.Subject {
	var out []provenance.Subject
	for _, li := range images {
		if li.From != "bundle" {
			continue
		}
		for _, a := range arches {
			out = append(out, imageSubject(li.Key+" "+a, li.Repository, li.Arch[a], li.ListDigest))
		}
	}
	return out
}

// coveredRecords are the payload's images written into release-<arch>.json: they reach the run
// by digest inside the payload whose own digest was verified.
func coveredRecords(images []lock.ImageDigests, res *source.Resolution, arches []string) ([]provenance.Record, error) {
	var out []provenance.Record
	for _, li := range images {
		if li.From != "payload" {
			continue
		}
		for _, a := range arches {
			ref := li.Arch[a]
			i := strings.LastIndex(ref, "@")
			if i < 0 {
				return nil, fmt.Errorf("payload image %s (%s): %q is not a digest reference", li.Key, a, ref)
			}
			p := payloadOf(res, a)
			if p == nil {
				return nil, fmt.Errorf("payload image %s (%s): no payload of %s", li.Key, a, a)
			}
			out = append(out, provenance.Record{Role: li.Key + " " + a, Image: ref[:i], Digest: ref[i+1:], Status: provenance.StatusCovered,
				CoveredBy: source.Repository(p.Ref) + "@" + p.Digest})
		}
	}
	return out, nil
}

func payloadOf(res *source.Resolution, arch string) *source.PayloadRef {
	for i := range res.Payloads {
		if res.Payloads[i].Arch == arch {
			return &res.Payloads[i]
		}
	}
	return nil
}

// ociSubject reports whether s was read from an OCI layout, which carries no signature.
func ociSubject(s provenance.Subject) bool {
	return strings.HasPrefix(s.Ref, "oci:") || strings.HasPrefix(s.Repository, "oci:")
}

// check verifies subjects; an image read from an OCI layout has no signature to verify and is
// recorded unsigned when unsigned content is allowed, else it is an error.
func (x *verification) check(ctx context.Context, subjects []provenance.Subject) ([]provenance.Record, error) {
	var records []provenance.Record
	var verify []provenance.Subject
	for _, s := range subjects {
		if !ociSubject(s) {
			verify = append(verify, s)
			continue
		}
		if !x.allow {
			return nil, fmt.Errorf("%s %s is read from an OCI layout, which carries no signature to verify (%s to accept it unsigned)", s.Role, s.Ref, option.AllowUnsigned)
		}
		records = append(records, provenance.Record{Role: s.Role, Image: s.Repository, Digest: s.Digest, Status: provenance.StatusUnsigned,
			Reason: "allowed unsigned: an OCI layout carries no signature"})
	}
	verified, err := x.verifyAll(ctx, verify)
	return append(records, verified...), err
}

// report verifies everything the run writes or uses and builds the provenance report: the
// bundle, the payloads, the bundle's images as written, and the payload's images as covered.
func (x *verification) report(ctx context.Context, res *source.Resolution, images []lock.ImageDigests, arches []string) (*provenance.Report, error) {
	subjects := append([]provenance.Subject{bundleSubject(res.Bundle)}, payloadSubjects(res)...)
	records, err := x.check(ctx, append(subjects, imageSubjects(images, arches)...))
	if err != nil {
		return nil, err
	}
	covered, err := coveredRecords(images, res, arches)
	if err != nil {
		return nil, err
	}
	return x.v.NewReport(append(records, covered...)), nil
}

// provenanceWarnings are what a reviewer must read about a report: a run that allowed unsigned
// content, each unsigned digest, and digests signed by OpenShift CI only.
func provenanceWarnings(rep *provenance.Report) []string {
	var out []string
	unsigned := rep.Unsigned()
	if rep.AllowUnsigned {
		out = append(out, fmt.Sprintf("this run allowed unsigned content (%s): %d digest(s) unsigned", option.AllowUnsigned, len(unsigned)))
	}
	for _, r := range unsigned {
		out = append(out, fmt.Sprintf("unsigned: %s %s@%s: %s", r.Role, r.Image, r.Digest, r.Reason))
	}
	if ci := rep.CIOnly(); len(ci) > 0 {
		var what []string
		for _, r := range ci {
			what = append(what, r.Role)
		}
		slices.Sort(what)
		out = append(out, "CI-signed only (OpenShift CI key, not a Red Hat release key): "+strings.Join(slices.Compact(what), ", "))
	}
	return out
}

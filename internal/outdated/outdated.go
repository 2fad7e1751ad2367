// Package outdated answers "which MicroShift branches lag?" for a clone: per branch, read
// from git without checking it out (internal/gittree), what the branch records now
// (recorded.Read: the lock, else its bundle record and release JSON) and what a rebase
// of it would pick today under the same rules as a run (the LVMS-minor policy, the newest
// bundle tag of that minor, the payload rule). One Source serves every branch, so each
// repository's tags are listed once per run.
package outdated

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/gittree"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// Statuses of a branch.
const (
	Current  = "current"
	Outdated = "outdated"
	Error    = "error"
)

// Pair is a recorded value and the one a run would pick today.
type Pair struct {
	Current string
	Newest  string
}

// Status is one branch's answer.
type Status struct {
	Branch string
	Commit string
	// OCP is the branch's OpenShift minor (release.base); LVMS the LVMS minor a run picks.
	OCP  string
	LVMS string
	// RecordedFrom says where Current values come from: "lock" or "records".
	RecordedFrom string
	Bundle       Pair
	Payload      Pair
	// PayloadRule is the rule a run applies: "tree" (last_rebase.sh) or "newest".
	PayloadRule string
	// Signatures says what proves the branch's pins, as its lock records it (Signatures*).
	Signatures string
	// Unsigned lists the pins the lock records as unsigned ("<role> <image>@<digest>").
	Unsigned []string
	Status   string
	// Reason says what lags, or why the branch could not be read.
	Reason string
}

// Values of Status.Signatures.
const (
	// SignaturesVerified: every pin is signed (or covered by a signed payload) under the policy
	// the check was given.
	SignaturesVerified = "verified"
	// SignaturesCIOnly: verified, some pins by OpenShift CI's key only.
	SignaturesCIOnly = "ci-signed-only"
	// SignaturesUnsigned: the lock records unsigned pins (a run with --allow-unsigned).
	SignaturesUnsigned = "unsigned"
	// SignaturesOtherPolicy: verified under another policy than the check's.
	SignaturesOtherPolicy = "other-policy"
	// SignaturesNotRecorded: no lock, or a lock written before signatures were verified.
	SignaturesNotRecorded = "not-recorded"
)

// Report is the whole answer, in the order the branches were given (`-o json|yaml` prints it
// as api/v1alpha1's BranchStatusList).
type Report struct {
	Items []Status
	// Outdated and Errors list the branches with those statuses (a CI matrix reads Outdated).
	Outdated []string
	Errors   []string
}

// Options configure Check.
type Options struct {
	// Repo is the clone (any directory inside its work tree, or a bare repository).
	Repo string
	// Branches to check, local branch names; nil means DefaultBranches (an empty default set
	// is an error, never "every branch current").
	Branches []string
	// Source configures the registry access; one source answers for every branch (each
	// repository's tags are listed once). It pins nothing: a pinned bundle or payload names
	// one tree's inputs, while Check answers what a plain run of each branch would pick.
	Source source.Options
	// Parallel bounds the branches read at once (default 4).
	Parallel int
	// Policy is the digest of the signature policy a rebase uses (provenance.Policy.Digest;
	// "" or "built-in": the built-in one); a lock recorded under another says so.
	Policy string
}

// branchRE matches the branch names checked by default: main, release-4.Y, release-5.Y.
var branchRE = regexp.MustCompile(`^(main|release-[45]\.[0-9]+)$`)

// DefaultBranches are the local branches named main, release-4.Y or release-5.Y whose tree
// has assets/release/release-x86_64.json (a MicroShift branch with embedded storage).
func DefaultBranches(ctx context.Context, repo string) ([]string, error) {
	all, err := gittree.Branches(ctx, repo)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range all {
		if !branchRE.MatchString(b) {
			continue
		}
		if _, err := git.Run(ctx, repo, "cat-file", "-e", "refs/heads/"+b+":"+recorded.BaseFile); err == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// Check reports every branch; a branch that cannot be read is reported with status error
// and the others are still checked. The error return is for the clone itself, the options
// (an *option.Error: a pin, a name that is no branch name, a name given twice) and an empty
// set of branches to check.
func Check(ctx context.Context, o Options) (*Report, error) {
	if err := checkPins(o.Source); err != nil {
		return nil, err
	}
	// The files the options name (auth, IDMS) are checked before the clone is read.
	src, err := source.New(o.Source)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(o.Repo); err != nil || !st.IsDir() {
		return nil, option.Pathf(option.MicroShiftDir, o.Repo, "%q: expected an existing directory (a MicroShift clone)", o.Repo)
	}
	if _, err := git.Run(ctx, o.Repo, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("%s: not a git clone: %w", o.Repo, err)
	}
	branches, refs, err := branchesToCheck(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	// Branches are read in parallel (git processes, registry answers shared through src) and
	// reported in the order given; a panic reading one is that branch's error.
	items := make([]Status, len(branches))
	var g errgroup.Group
	g.SetLimit(o.Parallel)
	for i, b := range branches {
		g.Go(func() error {
			defer func() {
				if v := recover(); v != nil {
					items[i] = Status{Branch: b, Status: Error,
						Reason: fmt.Sprintf("branch %s: internal error: %v", b, v)}
				}
			}()
			items[i] = checkBranch(ctx, src, o, refs, b)
			return nil
		})
	}
	_ = g.Wait()
	rep := &Report{Items: items, Outdated: []string{}, Errors: []string{}}
	for _, st := range items {
		switch st.Status {
		case Outdated:
			rep.Outdated = append(rep.Outdated, st.Branch)
		case Error:
			rep.Errors = append(rep.Errors, st.Branch)
		}
	}
	return rep, nil
}

// checkPins refuses source pins: each branch's inputs are its own tree's.
func checkPins(o source.Options) error {
	if o.BundleRef != "" {
		return option.Errorf(option.LVMSBundle, "%q: outdated answers what a plain rebase of each branch picks; a pinned bundle does not apply", o.BundleRef)
	}
	for _, a := range slices.Sorted(maps.Keys(o.ReleaseRefs)) {
		return option.Errorf(option.For(option.OCPRelease, a), "%q: outdated answers what a plain rebase of each branch picks; a pinned payload does not apply", o.ReleaseRefs[a])
	}
	return nil
}

// branchesToCheck is the set of branches Check reports: the names given, each a branch name
// and none twice (else an *option.Error), or DefaultBranches, which must not be empty.
func branchesToCheck(ctx context.Context, o Options) ([]string, gittree.Refs, error) {
	refs, err := gittree.ReadRefs(ctx, o.Repo)
	if err != nil {
		return nil, nil, err
	}
	if o.Branches == nil {
		branches, err := DefaultBranches(ctx, o.Repo)
		if err == nil && len(branches) == 0 {
			err = noDefaultBranches(o.Repo, refs)
		}
		return branches, refs, err
	}
	if len(o.Branches) == 0 {
		return nil, nil, option.Errorf(option.Branches, "is empty: name at least one branch, or leave it out to check main and release-X.Y")
	}
	var problems []string
	seen := map[string]bool{}
	for _, b := range o.Branches {
		if msg := gittree.BranchNameProblem(ctx, o.Repo, b); msg != "" {
			problems = append(problems, msg)
		} else if seen[b] {
			problems = append(problems, fmt.Sprintf("%q given twice", b))
		}
		seen[b] = true
	}
	if len(problems) > 0 {
		return nil, nil, option.Errorf(option.Branches, "%s", strings.Join(problems, "; "))
	}
	return o.Branches, refs, nil
}

// noDefaultBranches says that a clone has no branch to check by default, and what it has
// instead: a CI checkout (detached HEAD, only origin/* refs) checks nothing otherwise.
func noDefaultBranches(repo string, refs gittree.Refs) error {
	msg := fmt.Sprintf("%s: no branch to check: no local branch named main, release-4.Y or release-5.Y has %s", repo, recorded.BaseFile)
	var remote []string
	for _, r := range refs.RemoteTracking() {
		if _, name, ok := strings.Cut(r, "/"); ok && branchRE.MatchString(name) {
			remote = append(remote, r)
		}
	}
	if len(remote) > 0 {
		msg += fmt.Sprintf("; the clone has only remote-tracking branches of them (%s): fetch them as local branches "+
			"(git fetch origin '+refs/heads/main:refs/heads/main' '+refs/heads/release-*:refs/heads/release-*')", strings.Join(first(remote, 5), ", "))
	}
	return fmt.Errorf("%s, or name branches with %s", msg, option.Branches)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

func checkBranch(ctx context.Context, src *source.Source, o Options, refs gittree.Refs, branch string) Status {
	st := Status{Branch: branch}
	fail := func(err error) Status {
		st.Status, st.Reason = Error, err.Error()
		return st
	}
	if msg := refs.NotLocal(ctx, o.Repo, branch); msg != "" {
		return fail(fmt.Errorf("branch %s", msg))
	}
	t, err := gittree.Open(ctx, o.Repo, "refs/heads/"+branch)
	if err != nil {
		return fail(fmt.Errorf("branch %s: %w", branch, err))
	}
	st.Commit = t.Commit
	rec, err := recorded.Read(t)
	if err != nil {
		return fail(fmt.Errorf("branch %s: %w", branch, err))
	}
	st.OCP, st.RecordedFrom = rec.OCP, rec.From
	st.Bundle.Current, st.Payload.Current = rec.Bundle, rec.Payload
	st.Signatures, st.Unsigned = signatures(rec.Provenance, o.Policy)
	if err := newest(ctx, src, o.Source, rec, &st); err != nil {
		return fail(fmt.Errorf("branch %s: %w", branch, err))
	}
	var lags []string
	if st.Bundle.Current != st.Bundle.Newest {
		lags = append(lags, fmt.Sprintf("bundle %s → %s", orNone(st.Bundle.Current), st.Bundle.Newest))
	}
	if st.Payload.Current != st.Payload.Newest {
		lags = append(lags, fmt.Sprintf("payload %s → %s", orNone(st.Payload.Current), st.Payload.Newest))
	}
	st.Status = Current
	if len(lags) > 0 {
		st.Status, st.Reason = Outdated, strings.Join(lags, "; ")
	}
	return st
}

// newest fills what a plain run on the branch would pick: the LVMS minor by the era policy,
// that minor's newest bundle tag, and the payload by the run's rule (last_rebase.sh when
// the tree has it, else the newest GA z common to every arch).
func newest(ctx context.Context, src *source.Source, o source.Options, rec *recorded.Recorded, st *Status) error {
	choice, err := src.PolicyLVMS(ctx, rec.OCP)
	if err != nil {
		return err
	}
	st.LVMS = choice.Minor
	if _, st.Bundle.Newest, err = src.NewestBundle(ctx, choice.Minor); err != nil {
		return err
	}
	if rec.LastRebase != nil {
		st.PayloadRule = recorded.PayloadTree
		st.Payload.Newest, err = treePayload(ctx, o, rec)
		return err
	}
	st.PayloadRule = recorded.PayloadNewest
	st.Payload.Newest, _, err = src.NewestPayload(ctx, rec.OCP)
	return err
}

// treeArch is the arch whose last_rebase.sh pull spec names the payload version (a run
// checks that every arch's payload is of the same OpenShift minor).
const treeArch = "x86_64"

// treePayload is the payload version a run with rule tree takes: the version the tag of
// last_rebase.sh's x86_64 pull spec names, or, for a spec pinned by digest (with a tag or not),
// the version its release-metadata records, read and checked against the tag as a run does.
func treePayload(ctx context.Context, o source.Options, rec *recorded.Recorded) (string, error) {
	ref := rec.LastRebase[treeArch]
	v, err := source.PayloadTagVersion(ref, treeArch)
	if err != nil {
		return "", fmt.Errorf("%s: %s pull spec: %w", recorded.LastRebaseFile, treeArch, err)
	}
	// A tag alone names the version a run resolves it to. A digest pins content, whose
	// release-metadata is the truth: a tag beside it that names another version is the mismatch
	// a run refuses (source.MismatchError), not a version to trust.
	if v != "" && !strings.Contains(ref, "@") {
		return v, nil
	}
	o.ReleaseRefs = rec.LastRebase
	pinned, err := source.New(o)
	if err != nil {
		return "", err
	}
	res, err := pinned.ResolvePayloads(ctx, rec.OCP)
	if err != nil {
		return "", fmt.Errorf("%s: %w", recorded.LastRebaseFile, err)
	}
	for _, p := range res.Payloads {
		if p.Arch == treeArch {
			return p.Version, nil
		}
	}
	return "", fmt.Errorf("%s: no %s payload resolved from %s", recorded.LastRebaseFile, treeArch, ref)
}

// signatures says what a branch's lock records about the signatures of its pins.
func signatures(p *provenance.Report, policy string) (string, []string) {
	if policy == "" {
		policy = provenance.BuiltinSource
	}
	switch {
	case p == nil:
		return SignaturesNotRecorded, nil
	case len(p.Unsigned()) > 0:
		var out []string
		for _, r := range p.Unsigned() {
			out = append(out, r.Role+" "+r.Image+"@"+r.Digest)
		}
		return SignaturesUnsigned, out
	case p.Policy != policy:
		return SignaturesOtherPolicy, nil
	case len(p.CIOnly()) > 0:
		return SignaturesCIOnly, nil
	}
	return SignaturesVerified, nil
}

func orNone(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

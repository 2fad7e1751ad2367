package output

import (
	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/applier"
	"github.com/lvms-rebase/lvms-rebase/internal/fleet"
	"github.com/lvms-rebase/lvms-rebase/internal/outdated"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
	"github.com/lvms-rebase/lvms-rebase/rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// The one mapping from the library's results to the documents of api/v1alpha1, one function
// per kind. The library's structs carry no JSON tags: what a script reads is declared by the
// API package alone, and renaming a library field changes this file, never the output. Lists
// keep their nil-ness (a nil list prints null where the API does not omit it, as it did when
// the library's structs were printed).

// RebaseResult is the RebaseResult document of a run's result.
func RebaseResult(res *rebase.Result) *v1alpha1.RebaseResult {
	out := rebaseResult(res)
	out.TypeMeta = v1alpha1.Meta(v1alpha1.KindRebaseResult)
	return out
}

func rebaseResult(res *rebase.Result) *v1alpha1.RebaseResult {
	out := &v1alpha1.RebaseResult{
		OCP: res.OCP, Era: res.Era, OCPEra: res.OCPEra, LVMS: lvmsChoice(res.LVMS),
		PayloadRule: res.PayloadRule, PayloadSource: res.PayloadSource, Mode: string(res.Mode),
		Resolution: resolution(res.Resolution), BundleVersion: res.BundleVersion,
		PayloadVersion: res.PayloadVersion, SnapshotCommit: res.SnapshotCommit, Images: res.Images,
		ReleaseChanges: releaseChanges(res.ReleaseChanges), Plan: plan(res.Changes),
		SemanticChanges: res.Semantic, FormattingChanges: res.Formatting, Diff: res.Diff,
		Excluded: each(res.Excluded, func(e bundle.Excluded) v1alpha1.ExcludedObject {
			return v1alpha1.ExcludedObject{File: e.File, Kind: e.Kind, Name: e.Name, Reason: e.Reason}
		}),
		RecipeChanges: each(res.RecipeChanges, func(c recipe.Change) v1alpha1.RecipeChange {
			return v1alpha1.RecipeChange{Recipe: c.Recipe, Dir: c.Dir, Added: c.Added, Dropped: c.Dropped}
		}),
		Retired: each(res.Retired, func(f rebase.RetiredFile) v1alpha1.RetiredFile {
			return v1alpha1.RetiredFile{Path: f.Path, Why: f.Why}
		}),
		UndeclaredImages: each(res.UndeclaredImages, func(i bundle.Image) v1alpha1.BundleImage {
			return v1alpha1.BundleImage{Name: i.Name, Key: i.Key, Ref: i.Ref, Undeclared: i.Undeclared}
		}),
		ImageUses: each(res.ImageUses, func(u render.ImageUse) v1alpha1.ImageUse {
			return v1alpha1.ImageUse{File: u.File, Kind: u.Kind, Name: u.Name, Field: u.Field, Key: u.Key}
		}),
		RBAC: rbacReview(res.RBAC), Warnings: res.Warnings,
		Phases: each(res.Phases, func(p rebase.Phase) v1alpha1.Phase {
			return v1alpha1.Phase{Name: p.Name, Duration: v1alpha1.Duration{Duration: p.Duration}}
		}),
		Fetched: each(res.Fetched, fetchStats), Commits: res.Commits, Uncommitted: res.Uncommitted, Drift: res.Drift,
		LockDrift: res.LockDrift, Recovered: each(res.Recovered, recovery), Provenance: provenanceReport(res.Provenance),
	}
	return out
}

func provenanceReport(r *provenance.Report) *v1alpha1.Provenance {
	if r == nil {
		return nil
	}
	return &v1alpha1.Provenance{Policy: r.Policy, PolicyFile: r.PolicyFile, AllowUnsigned: r.AllowUnsigned,
		Records: each(r.Records, func(rec provenance.Record) v1alpha1.ProvenanceRecord {
			return v1alpha1.ProvenanceRecord{Role: rec.Role, Image: rec.Image, Digest: rec.Digest, Status: rec.Status,
				Scope: rec.Scope, CoveredBy: rec.CoveredBy, Reason: rec.Reason,
				Signatures: each(rec.Signatures, func(s provenance.Signature) v1alpha1.Signature {
					return v1alpha1.Signature{Format: s.Format, Key: s.Key, KeyName: s.KeyName, Class: s.Class,
						Identity: s.Identity, SignedDigest: s.SignedDigest, Store: s.Store, N: s.N, Sig: s.Sig,
						Layer: s.Layer, SHA256: s.SHA256}
				})}
		})}
}

func lvmsChoice(c *era.Choice) *v1alpha1.LVMSChoice {
	if c == nil {
		return nil
	}
	return &v1alpha1.LVMSChoice{Minor: c.Minor, Rule: c.Rule, Reason: c.Reason, Warning: c.Warning}
}

func releaseChanges(m map[string]*release.Change) map[string]*v1alpha1.ReleaseChange {
	if m == nil {
		return nil
	}
	out := make(map[string]*v1alpha1.ReleaseChange, len(m))
	for arch, c := range m {
		if c == nil {
			out[arch] = nil
			continue
		}
		out[arch] = &v1alpha1.ReleaseChange{Added: c.Added, Updated: c.Updated, Removed: c.Removed}
	}
	return out
}

func plan(c *tree.Changes) *v1alpha1.Plan {
	if c == nil {
		return nil
	}
	return &v1alpha1.Plan{Add: c.Add, Change: c.Change, Remove: c.Remove, Unchanged: c.Unchanged}
}

func rbacReview(r *review.RBAC) *v1alpha1.RBACReview {
	if r == nil {
		return nil
	}
	finding := func(f review.Finding) v1alpha1.RBACFinding {
		return v1alpha1.RBACFinding{Role: f.Role, Rule: f.Rule, Class: f.Class}
	}
	return &v1alpha1.RBACReview{Changed: r.Changed, Changes: each(r.Changes, finding), Escalations: each(r.Escalations, finding)}
}

func fetchStats(s source.FetchStats) v1alpha1.FetchStats {
	return v1alpha1.FetchStats{Image: s.Image, BytesFetched: s.BytesFetched, BlobsFetched: s.BlobsFetched,
		BlobsCached: s.BlobsCached, LayersRead: s.LayersRead, LayersTotal: s.LayersTotal, Files: s.Files}
}

func recovery(r tree.Recovery) v1alpha1.Recovery {
	return v1alpha1.Recovery{Dir: r.Dir, Action: r.Action, Reason: r.Reason, Pending: r.Pending, Paths: r.Paths,
		Conflicts: each(r.Conflicts, func(c tree.Conflict) v1alpha1.RecoveryConflict {
			return v1alpha1.RecoveryConflict{Path: c.Path, Problem: c.Problem, Resolve: c.Resolve}
		})}
}

// Resolution is the Resolution document of what resolve picked.
func Resolution(res *source.Resolution) *v1alpha1.Resolution {
	out := resolution(res)
	if out == nil {
		out = &v1alpha1.Resolution{}
	}
	out.TypeMeta = v1alpha1.Meta(v1alpha1.KindResolution)
	return out
}

func resolution(res *source.Resolution) *v1alpha1.Resolution {
	if res == nil {
		return nil
	}
	return &v1alpha1.Resolution{
		OCP: res.OCP,
		Bundle: v1alpha1.BundleRef{Ref: res.Bundle.Ref, Digest: res.Bundle.Digest, Version: res.Bundle.Version,
			CSVVersion: res.Bundle.CSVVersion},
		Payloads: each(res.Payloads, func(p source.PayloadRef) v1alpha1.PayloadRef {
			return v1alpha1.PayloadRef{Arch: p.Arch, Ref: p.Ref, Digest: p.Digest, ListDigest: p.ListDigest, Version: p.Version}
		}),
		RelatedImages: each(res.RelatedImages, func(d source.ImageDigests) v1alpha1.ImageDigests {
			return v1alpha1.ImageDigests{Name: d.Name, Image: d.Image, ListDigest: d.ListDigest,
				Arches: each(d.Arches, func(a source.ArchDigest) v1alpha1.ArchDigest {
					return v1alpha1.ArchDigest{Arch: a.Arch, Digest: a.Digest}
				})}
		}),
		LVMS: lvmsChoice(res.LVMS), PayloadRule: res.PayloadRule, Warnings: res.Warnings,
	}
}

// ApplyResult is the ApplyResult document of what apply did. Every list prints, empty as [].
func ApplyResult(res *applier.Result) *v1alpha1.ApplyResult {
	out := &v1alpha1.ApplyResult{TypeMeta: v1alpha1.Meta(v1alpha1.KindApplyResult),
		Era: string(res.Era), Lvmd: res.Lvmd.Message, LvmdPath: res.Lvmd.Path, LvmdChecksum: res.LvmdChecksum,
		RuntimeLvmdWritten: res.RuntimeLvmdWritten, Created: objects(res.Created), Updated: objects(res.Updated),
		Deleted: objects(res.Deleted), Unchanged: objects(res.Unchanged), Skipped: skipped(res.Skipped),
		Warnings: res.Warnings, Remaining: objects(res.Remaining), Foreign: objects(res.Foreign),
		Kept: skipped(res.Kept), Components: []v1alpha1.Component{}}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range res.Components {
		cj := v1alpha1.Component{Name: c.Name, Enabled: c.Enabled}
		if c.Err != nil {
			cj.Error = c.Err.Error()
		}
		out.Components = append(out.Components, cj)
	}
	return out
}

func objects(refs []applier.ObjectRef) []v1alpha1.Object {
	out := make([]v1alpha1.Object, 0, len(refs))
	for _, r := range refs {
		out = append(out, object(r))
	}
	return out
}

func object(r applier.ObjectRef) v1alpha1.Object {
	return v1alpha1.Object{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

func skipped(skips []applier.Skip) []v1alpha1.SkippedObject {
	out := make([]v1alpha1.SkippedObject, 0, len(skips))
	for _, s := range skips {
		out = append(out, v1alpha1.SkippedObject{Object: object(s.Object), Reason: s.Reason})
	}
	return out
}

// BranchStatusList is the BranchStatusList document of outdated's report; each item is a
// BranchStatus document of its own.
func BranchStatusList(rep *outdated.Report) *v1alpha1.BranchStatusList {
	return &v1alpha1.BranchStatusList{TypeMeta: v1alpha1.Meta(v1alpha1.KindBranchStatusList),
		Items: each(rep.Items, func(s outdated.Status) v1alpha1.BranchStatus {
			return v1alpha1.BranchStatus{TypeMeta: v1alpha1.Meta(v1alpha1.KindBranchStatus),
				Branch: s.Branch, Commit: s.Commit, OCP: s.OCP, LVMS: s.LVMS, RecordedFrom: s.RecordedFrom,
				Bundle:      v1alpha1.VersionPair{Current: s.Bundle.Current, Newest: s.Bundle.Newest},
				Payload:     v1alpha1.VersionPair{Current: s.Payload.Current, Newest: s.Payload.Newest},
				PayloadRule: s.PayloadRule, Signatures: s.Signatures, Unsigned: s.Unsigned, Status: s.Status, Reason: s.Reason}
		}),
		Outdated: rep.Outdated, Errors: rep.Errors}
}

// BranchRebaseList is the BranchRebaseList document of a --branches run; each item's result
// is a RebaseResult without apiVersion and kind.
func BranchRebaseList(rep *fleet.Report) *v1alpha1.BranchRebaseList {
	return &v1alpha1.BranchRebaseList{TypeMeta: v1alpha1.Meta(v1alpha1.KindBranchRebaseList),
		Items: each(rep.Items, func(b fleet.BranchResult) v1alpha1.BranchRebase {
			out := v1alpha1.BranchRebase{Branch: b.Branch, ResultBranch: b.ResultBranch, Commit: b.Commit,
				PRBody: b.PRBody, Error: b.Error}
			if b.Result != nil {
				out.Result = rebaseResult(b.Result)
			}
			return out
		}),
		Failed: rep.Failed, StaleWorktrees: rep.StaleWorktrees}
}

// Version is the Version document of the binary's build information.
func Version(info version.Info) *v1alpha1.VersionInfo {
	return &v1alpha1.VersionInfo{TypeMeta: v1alpha1.Meta(v1alpha1.KindVersion),
		Version: info.Version, Revision: info.Revision, Modified: info.Modified}
}

// each maps a list, keeping a nil list nil.
func each[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

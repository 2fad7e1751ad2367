package applier

import (
	"context"
	"slices"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
)

// Names the applier gives what it records on the cluster (package kube writes them).
const (
	// DefaultSnapshotClassName is the default VolumeSnapshotClass the applier creates when any
	// device class is thin (MicroShift's design deploys it at start-up): snapshots of thin
	// volumes work without the user writing a class first.
	DefaultSnapshotClassName = kube.DefaultSnapshotClassName
	// DefaultClassAnnotation marks the cluster's default VolumeSnapshotClass.
	DefaultClassAnnotation = kube.DefaultClassAnnotation
	// PreflightEventReason is the reason of the Warning Event the applier records in the storage
	// namespace when the lvmd configuration names volume groups or thin pools the host does not
	// have (`oc get events -n openshift-storage` shows it): the node has no console, so the log
	// alone is not enough.
	PreflightEventReason = kube.PreflightEventReason
	// NotOwnedReason is how Result.Foreign objects are reported.
	NotOwnedReason = kube.NotOwnedReason
)

// kubeOptions are the settings of o that concern the API server.
func kubeOptions(o Options) kube.Options {
	return kube.Options{
		RESTConfig: o.RESTConfig, Logger: o.Logger,
		WaitTimeout: o.WaitTimeout, DeleteTimeout: o.DeleteTimeout, PollInterval: o.PollInterval,
		Prune: o.Prune, ForcePrune: o.ForcePrune,
	}
}

// applyPlan applies the snapshot component, then the storage component, each with its own CRDs,
// legacy deletions and objects, and records what was done in pl.result. A failure is recorded
// on its component and the other still runs: a broken storage driver must not keep the snapshot
// controller (or MicroShift) from starting.
func applyPlan(ctx context.Context, k *kube.Client, pl *preparation, comps []*ComponentResult) {
	rep := &kube.Report{}
	defer pl.result.record(rep)
	storage, snapshot := comps[0], comps[1]
	var storageObjs, snapshotObjs []assets.Object
	for _, ob := range pl.objects {
		if ob.Comp == assets.Storage {
			storageObjs = append(storageObjs, ob)
		} else {
			snapshotObjs = append(snapshotObjs, ob)
		}
	}
	var storageDel, snapshotDel []ObjectRef
	for _, r := range pl.deletes {
		if slices.ContainsFunc(snapshotWebhookObjects, r.SameObject) {
			snapshotDel = append(snapshotDel, r)
		} else {
			storageDel = append(storageDel, r)
		}
	}
	if pl.preflightFailed {
		reportPreflight(ctx, k, pl, storage.Err, rep)
	}
	if snapshot.Err == nil && (len(snapshotObjs) > 0 || len(snapshotDel) > 0) {
		snapshot.Err = k.RunComponent(ctx, snapshotObjs, candidates(snapshotDel), rep)
	}
	if storage.Err == nil && (len(storageObjs) > 0 || len(storageDel) > 0) {
		storage.Err = k.RunComponent(ctx, storageObjs, candidates(storageDel), rep)
		if storage.Err == nil && pl.thinClass != "" {
			storage.Err = k.EnsureDefaultSnapshotClass(ctx, pl.thinClass, rep)
		}
	}
	if len(pl.pruneSnapshot) > 0 && snapshot.Err == nil {
		snapshot.Err = k.Remaining(ctx, SnapshotComponent, false, candidates(pl.pruneSnapshot), rep)
	}
	if len(pl.pruneStorage) > 0 && storage.Err == nil {
		storage.Err = k.Remaining(ctx, StorageComponent, true, candidates(pl.pruneStorage), rep)
	}
	if pl.o.Wait {
		waitComponents(ctx, k, pl.ready, storage, snapshot)
	}
}

// record appends what the API side did to the result.
func (r *Result) record(rep *kube.Report) {
	r.Created = append(r.Created, rep.Created...)
	r.Updated = append(r.Updated, rep.Updated...)
	r.Deleted = append(r.Deleted, rep.Deleted...)
	r.Unchanged = append(r.Unchanged, rep.Unchanged...)
	r.Remaining = append(r.Remaining, rep.Remaining...)
	r.Foreign = append(r.Foreign, rep.Foreign...)
	for _, s := range rep.Kept {
		r.Kept = append(r.Kept, Skip(s))
	}
	for _, s := range rep.Skipped {
		r.Skipped = append(r.Skipped, Skip(s))
	}
	r.Warnings = append(r.Warnings, rep.Warnings...)
}

// waitComponents waits for the workloads of the components that applied without error.
func waitComponents(ctx context.Context, k *kube.Client, ready []ObjectRef, storage, snapshot *ComponentResult) {
	var storageReady, snapshotReady []ObjectRef
	for _, r := range ready {
		if r.Namespace == eras.SnapshotNamespace {
			snapshotReady = append(snapshotReady, r)
		} else {
			storageReady = append(storageReady, r)
		}
	}
	if snapshot.Err == nil && len(snapshotReady) > 0 {
		snapshot.Err = k.WaitReady(ctx, snapshotReady)
	}
	if storage.Err == nil && len(storageReady) > 0 {
		storage.Err = k.WaitReady(ctx, storageReady)
	}
}

// reportPreflight records the failed host check as a Warning Event in the storage namespace,
// about the era's marker object (kube.Client.RecordEvent). A failure to record it is a warning:
// the component has failed already, with the reason.
func reportPreflight(ctx context.Context, k *kube.Client, pl *preparation, cause error, rep *kube.Report) {
	if err := k.RecordEvent(ctx, pl.era.marker, cause.Error()); err != nil {
		msg := "recording the lvmd host check failure as an Event: " + err.Error()
		pl.o.Logger.Warn(msg)
		rep.Warnings = append(rep.Warnings, msg)
	}
}

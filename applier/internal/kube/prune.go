package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// Remaining handles a switched-off component (comp, the storage driver when storage): it reports
// the objects an earlier start left on the cluster in rep.Remaining, or with Options.Prune deletes
// them and waits until they are gone; rep.Remaining then lists only what it left, and rep.Kept
// says why. Only candidates the applier can prove MicroShift's count (the others go to
// rep.Foreign). Pruning storage is refused while volumes or snapshots of the driver exist
// (guardVolumes), unless ForcePrune; a refused prune deletes nothing.
func (k *Client) Remaining(ctx context.Context, comp string, storage bool, candidates []Candidate, rep *Report) error {
	found, err := k.lookupOwned(ctx, candidates, rep)
	if err != nil {
		return err
	}
	if storage {
		if found, err = k.keepUsedSnapshotClass(ctx, found, rep); err != nil {
			return err
		}
	}
	if len(found) == 0 {
		return nil
	}
	var names []string
	for _, f := range found {
		names = append(names, f.ref.String())
	}
	if !k.o.Prune {
		msg := fmt.Sprintf("%s is switched off but %d of its objects from an earlier start remain: %s; Options.Prune deletes them", comp, len(found), strings.Join(names, ", "))
		k.log.Warn(msg)
		rep.Warnings = append(rep.Warnings, msg)
		rep.Remaining = append(rep.Remaining, liveRefs(found)...)
		return nil
	}
	if storage && !k.o.ForcePrune {
		if err := k.guardVolumes(ctx); err != nil {
			for _, f := range found {
				rep.Remaining = append(rep.Remaining, f.ref)
				rep.Kept = append(rep.Kept, Skip{Object: f.ref, Reason: "prune refused: volumes or snapshots of " + topolvmDriver + " exist"})
			}
			return err
		}
	}
	k.log.Info("pruning switched-off component", "component", comp, "count", len(found))
	kept, err := k.deleteObjects(ctx, found, rep)
	rep.Remaining = append(rep.Remaining, liveRefs(kept)...)
	return err
}

func liveRefs(objs []liveObject) []eras.ObjectRef {
	var out []eras.ObjectRef
	for _, o := range objs {
		out = append(out, o.ref)
	}
	return out
}

// guardVolumes refuses to remove the storage driver while PersistentVolumes or
// VolumeSnapshotContents of topolvm.io exist: without the driver nothing can mount, expand or
// delete them, and the design allows removal only when none remain.
func (k *Client) guardVolumes(ctx context.Context) error {
	pvs, err := k.listNames(ctx, schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}, "spec", "csi", "driver")
	if err != nil {
		return err
	}
	vscs, err := k.listNames(ctx, schema.GroupVersionKind{Group: volumeSnapshotClassGVK.Group, Version: "v1", Kind: "VolumeSnapshotContent"}, "spec", "driver")
	if err != nil {
		return err
	}
	if len(pvs)+len(vscs) == 0 {
		return nil
	}
	var in []string
	if len(pvs) > 0 {
		in = append(in, fmt.Sprintf("PersistentVolumes %s", strings.Join(pvs, ", ")))
	}
	if len(vscs) > 0 {
		in = append(in, fmt.Sprintf("VolumeSnapshotContents %s", strings.Join(vscs, ", ")))
	}
	return fmt.Errorf("prune refused, nothing deleted: %s of driver %s still exist; delete them first, or force the prune (Options.ForcePrune)", strings.Join(in, " and "), topolvmDriver)
}

// listNames lists the objects of gvk (all namespaces) whose field at path is topolvm.io, by
// name (namespace/name when namespaced), sorted. An API the cluster does not serve has none.
func (k *Client) listNames(ctx context.Context, gvk schema.GroupVersionKind, path ...string) ([]string, error) {
	list, err := k.list(ctx, gvk)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range listItems(list) {
		if v, _, _ := unstructured.NestedString(u.Object, path...); v == topolvmDriver {
			out = append(out, strings.TrimPrefix(u.GetNamespace()+"/"+u.GetName(), "/"))
		}
	}
	slices.Sort(out)
	return out, nil
}

// list lists every object of gvk in all namespaces; nil when the API is not served.
func (k *Client) list(ctx context.Context, gvk schema.GroupVersionKind) (*unstructured.UnstructuredList, error) {
	ri, _, err := k.resource(ctx, gvk, metav1.NamespaceAll, false)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
	}
	var list *unstructured.UnstructuredList
	err = k.retry(ctx, "list "+gvk.Kind, func() (err error) {
		list, err = ri.List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
	}
	return list, nil
}

func listItems(l *unstructured.UnstructuredList) []unstructured.Unstructured {
	if l == nil {
		return nil
	}
	return l.Items
}

// keepUsedSnapshotClass drops the default VolumeSnapshotClass from found while a VolumeSnapshot
// names it, with a warning: deleting it would leave those snapshots without their class.
func (k *Client) keepUsedSnapshotClass(ctx context.Context, found []liveObject, rep *Report) ([]liveObject, error) {
	i := slices.IndexFunc(found, func(f liveObject) bool { return f.ref.SameObject(DefaultSnapshotClassRef) })
	if i < 0 {
		return found, nil
	}
	list, err := k.list(ctx, schema.GroupVersionKind{Group: volumeSnapshotClassGVK.Group, Version: "v1", Kind: "VolumeSnapshot"})
	if err != nil {
		return nil, err
	}
	var users []string
	for _, u := range listItems(list) {
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "volumeSnapshotClassName"); c == DefaultSnapshotClassName {
			users = append(users, u.GetNamespace()+"/"+u.GetName())
		}
	}
	if len(users) == 0 {
		return found, nil
	}
	msg := fmt.Sprintf("%s kept: VolumeSnapshots %s use it", DefaultSnapshotClassRef, strings.Join(users, ", "))
	k.log.Warn(msg)
	rep.Warnings = append(rep.Warnings, msg)
	rep.Remaining = append(rep.Remaining, DefaultSnapshotClassRef)
	rep.Kept = append(rep.Kept, Skip{Object: DefaultSnapshotClassRef, Reason: "in use: VolumeSnapshots " + strings.Join(users, ", ") + " name it"})
	return slices.Delete(found, i, i+1), nil
}

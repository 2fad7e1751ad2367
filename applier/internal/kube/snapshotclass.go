package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// The default VolumeSnapshotClass the applier creates when any device class is thin (MicroShift's
// design deploys it at start-up): snapshots of thin volumes work without the user writing a class
// first. TopoLVM snapshots only thin volumes, whichever class is the default.
const (
	DefaultSnapshotClassName = "topolvm-snapclass"
	// DefaultClassAnnotation marks the cluster's default VolumeSnapshotClass.
	DefaultClassAnnotation = "snapshot.storage.kubernetes.io/is-default-class"
	topolvmDriver          = "topolvm.io"
)

var (
	volumeSnapshotClassGVK = schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass"}
	// DefaultSnapshotClassRef names it, a prune candidate of the storage driver.
	DefaultSnapshotClassRef = eras.ObjectRef{Group: volumeSnapshotClassGVK.Group, Version: "v1", Kind: "VolumeSnapshotClass", Name: DefaultSnapshotClassName}
)

// DefaultSnapshotClass is the object created for the default device class: TopoLVM snapshots a
// volume within its own device class, so the class needs no parameters.
func DefaultSnapshotClass() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"driver":         topolvmDriver,
		"deletionPolicy": "Delete",
	}}
	u.SetGroupVersionKind(volumeSnapshotClassGVK)
	u.SetName(DefaultSnapshotClassName)
	u.SetAnnotations(map[string]string{DefaultClassAnnotation: "true"})
	u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": FieldManager})
	return u
}

// EnsureDefaultSnapshotClass creates the default VolumeSnapshotClass for the thin device class dc
// unless the cluster already has a default class for topolvm.io or the class itself exists: an
// administrator's default is never overwritten, and a second default for the driver is never
// added (a default of another driver does not count: the snapshot controller picks defaults per
// driver). It costs one LIST when nothing needs creating.
func (k *Client) EnsureDefaultSnapshotClass(ctx context.Context, dc string, rep *Report) error {
	ref := DefaultSnapshotClassRef
	ri, _, err := k.resource(ctx, volumeSnapshotClassGVK, "", k.providedByCRD(volumeSnapshotClassGVK))
	if meta.IsNoMatchError(err) {
		rep.Skipped = append(rep.Skipped, Skip{Object: ref, Reason: "VolumeSnapshotClass API is not served (snapshot CRDs not applied)"})
		return nil
	}
	if err != nil {
		return fmt.Errorf("default VolumeSnapshotClass: %w", err)
	}
	var list *unstructured.UnstructuredList
	err = k.retry(ctx, "list VolumeSnapshotClasses", func() (err error) {
		list, err = ri.List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("listing VolumeSnapshotClasses: %w", err)
	}
	for _, c := range list.Items {
		if c.GetName() == DefaultSnapshotClassName || c.GetAnnotations()[DefaultClassAnnotation] == "true" && c.Object["driver"] == topolvmDriver {
			if c.GetName() == DefaultSnapshotClassName {
				rep.Unchanged = append(rep.Unchanged, ref)
			}
			return nil
		}
	}
	vsc := DefaultSnapshotClass()
	// The applied-hash makes it provably the applier's (a prune may delete it).
	if _, err := setAppliedHash(vsc); err != nil {
		return fmt.Errorf("hashing %s: %w", ref, err)
	}
	err = k.retry(ctx, "create "+ref.String(), func() error { return applyRecorded(ctx, ri, vsc, false) })
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		rep.Unchanged = append(rep.Unchanged, ref)
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s for thin device class %q: %w", ref, dc, err)
	}
	k.log.Info("created default VolumeSnapshotClass", "object", ref, "deviceClass", dc)
	rep.Created = append(rep.Created, ref)
	return nil
}

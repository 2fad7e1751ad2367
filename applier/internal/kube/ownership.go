package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// provenManagers are the field managers whose entry in an object's managedFields proves that
// MicroShift applied it: the applier's own, and "microshift", the manager kube-apiserver records
// for MicroShift's storage code before the applier (it sets no field manager, so the server takes
// the program name from its User-Agent, "microshift/<version> …"). An LVMS installed through OLM
// or by hand carries neither, so objects with the same names are never deleted.
var provenManagers = []string{FieldManager, "microshift"}

// NotOwnedReason is how Result.Foreign objects are reported.
const NotOwnedReason = "not applied by MicroShift; left alone"

// appliedByUs reports whether u carries the applier's applied-hash annotation or a managedFields
// entry of a proven manager.
func appliedByUs(u *unstructured.Unstructured) bool {
	if _, ok := u.GetAnnotations()[AppliedHashAnnotation]; ok {
		return true
	}
	return slices.ContainsFunc(u.GetManagedFields(), func(mf metav1.ManagedFieldsEntry) bool {
		return slices.Contains(provenManagers, mf.Manager)
	})
}

// owned reports whether the applier can prove u is MicroShift's: applied by it (appliedByUs), or
// controlled by an object it applied, matched by UID. The second covers what the LVMS operator
// creates for the LVMCluster MicroShift created (the vg-manager DaemonSet); one level only.
func (k *Client) owned(ctx context.Context, u *unstructured.Unstructured) (bool, error) {
	if appliedByUs(u) {
		return true, nil
	}
	ctrl := metav1.GetControllerOfNoCopy(u)
	if ctrl == nil {
		return false, nil
	}
	gv, err := schema.ParseGroupVersion(ctrl.APIVersion)
	if err != nil {
		return false, nil // not a reference anything could have been applied as
	}
	ri, _, err := k.resource(ctx, gv.WithKind(ctrl.Kind), u.GetNamespace(), false)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var owner *unstructured.Unstructured
	err = k.retry(ctx, "get owner of "+assets.RefOf(u).String(), func() (err error) {
		owner, err = ri.Get(ctx, ctrl.Name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return owner.GetUID() == ctrl.UID && appliedByUs(owner), nil
}

// liveObject is an object found on the cluster that the applier may delete: proven its own, with
// the UID the delete is conditioned on (a replacement created meanwhile is never deleted).
type liveObject struct {
	ref eras.ObjectRef
	ri  dynamic.ResourceInterface
	uid types.UID
}

// lookupOwned reads refs and returns those that exist and are provably MicroShift's, in refs'
// order. Existing objects it cannot prove are recorded in rep.Foreign (and a warning names them);
// absent objects and APIs cost one GET each and are skipped.
func (k *Client) lookupOwned(ctx context.Context, refs []eras.ObjectRef, rep *Report) ([]liveObject, error) {
	var out []liveObject
	var foreign []string
	for _, ref := range refs {
		ri, _, err := k.resource(ctx, ref.GroupVersionKind(), ref.Namespace, false)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", ref, err)
		}
		var u *unstructured.Unstructured
		err = k.retry(ctx, "get "+ref.String(), func() (err error) {
			u, err = ri.Get(ctx, ref.Name, metav1.GetOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", ref, err)
		}
		ok, err := k.owned(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("checking who applied %s: %w", ref, err)
		}
		if !ok {
			if !slices.ContainsFunc(rep.Foreign, ref.SameObject) {
				rep.Foreign = append(rep.Foreign, ref)
				foreign = append(foreign, ref.String())
			}
			continue
		}
		out = append(out, liveObject{ref: ref, ri: ri, uid: u.GetUID()})
	}
	if len(foreign) > 0 {
		msg := NotOwnedReason + ": " + strings.Join(foreign, ", ")
		k.log.Warn(msg)
		rep.Warnings = append(rep.Warnings, msg)
	}
	return out, nil
}

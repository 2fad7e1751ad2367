package applier

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// remaining runs with storage.driver "none": it reports the storage objects a previous start left
// on the cluster in res.Remaining, or with Options.Prune deletes them (and waits until they are
// gone). Only prunableKinds are candidates, so CRDs, volumes, claims, StorageClasses and the
// LVMCluster stay. Absent objects cost one GET each and no write.
func (k *kube) remaining(ctx context.Context, candidates []ObjectRef, res *Result) error {
	var found []ObjectRef
	for _, ref := range candidates {
		ri, _, err := k.resource(ctx, ref.GroupVersionKind(), ref.Namespace, false)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", ref, err)
		}
		err = k.retry(ctx, "get "+ref.String(), func() error {
			_, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", ref, err)
		}
		found = append(found, ref)
	}
	if len(found) == 0 {
		return nil
	}
	if !k.o.Prune {
		res.Remaining = found
		msg := fmt.Sprintf("storage.driver is \"none\" but %d storage objects of an earlier start remain (first: %s); prune them with Options.Prune (lvms-rebase apply --prune)", len(found), found[0])
		k.log.Warn(msg)
		res.Warnings = append(res.Warnings, msg)
		return nil
	}
	k.log.Info("pruning storage driver objects", "count", len(found))
	return k.deleteLegacy(ctx, found, res)
}

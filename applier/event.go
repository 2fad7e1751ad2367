package applier

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PreflightEventReason is the reason of the Warning Event the applier records in the storage
// namespace when the lvmd configuration names volume groups or thin pools the host does not
// have (`oc get events -n openshift-storage` shows it): the node has no console, so the log alone
// is not enough.
const PreflightEventReason = "LvmdHostCheckFailed"

// maxEventMessage is kube-apiserver's limit on an Event's message.
const maxEventMessage = 1024

// reportPreflight records the failed host check as a Warning Event in the storage namespace
// (created when missing, as the storage component would), about the era's marker object. The
// name is derived from the message, so a restart with the same problem writes nothing. A failure
// to record it is a warning: the component has failed already, with the reason.
func (k *kube) reportPreflight(ctx context.Context, pl *preparation, cause error) {
	if err := k.recordEvent(ctx, pl.era.marker, cause.Error()); err != nil {
		msg := "recording the lvmd host check failure as an Event: " + err.Error()
		k.log.Warn(msg)
		pl.result.Warnings = append(pl.result.Warnings, msg)
	}
}

func (k *kube) recordEvent(ctx context.Context, about ObjectRef, message string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(StorageNamespace)
	nsri, _, err := k.resource(ctx, ns.GroupVersionKind(), "", false)
	if err != nil {
		return err
	}
	if _, err := nsri.Get(ctx, StorageNamespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		err = k.retry(ctx, "create namespace "+StorageNamespace, func() error { return createAbsent(ctx, nsri, ns) })
		if err != nil && !apierrors.IsConflict(err) {
			return err
		}
	} else if err != nil {
		return err
	}
	if len(message) > maxEventMessage {
		message = message[:maxEventMessage-3] + "..."
	}
	now := metav1.NewTime(time.Now()).Rfc3339Copy()
	ev := &unstructured.Unstructured{Object: map[string]any{
		"involvedObject": map[string]any{
			"apiVersion": schema.GroupVersion{Group: about.Group, Version: about.Version}.String(),
			"kind":       about.Kind, "namespace": about.Namespace, "name": about.Name,
		},
		"reason": PreflightEventReason, "message": message, "type": "Warning", "count": int64(1),
		"source":         map[string]any{"component": FieldManager},
		"firstTimestamp": now.Format(time.RFC3339), "lastTimestamp": now.Format(time.RFC3339),
	}}
	ev.SetAPIVersion("v1")
	ev.SetKind("Event")
	ev.SetNamespace(StorageNamespace)
	ev.SetName(fmt.Sprintf("lvmd-host-check.%s", sha256sum(message)[:16]))
	ri, _, err := k.resource(ctx, ev.GroupVersionKind(), StorageNamespace, false)
	if err != nil {
		return err
	}
	_, err = ri.Get(ctx, ev.GetName(), metav1.GetOptions{})
	if err == nil {
		return nil // the same problem, recorded by an earlier start
	}
	err = k.retry(ctx, "create event "+ev.GetName(), func() error {
		_, err := ri.Create(ctx, ev, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	k.log.Info("recorded event", "namespace", StorageNamespace, "reason", PreflightEventReason)
	return err
}

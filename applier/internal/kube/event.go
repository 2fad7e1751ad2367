package kube

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
)

// PreflightEventReason is the reason of the Warning Event the applier records in the storage
// namespace when the lvmd configuration names volume groups or thin pools the host does not
// have (`oc get events -n openshift-storage` shows it): the node has no console, so the log alone
// is not enough.
const PreflightEventReason = "LvmdHostCheckFailed"

// maxEventMessage is kube-apiserver's limit on an Event's message.
const maxEventMessage = 1024

// RecordEvent records message as a Warning Event (PreflightEventReason) about the object about
// in the storage namespace, creating the namespace when missing, as the storage component
// would. The name is derived from the message, so a restart with the same problem writes nothing.
func (k *Client) RecordEvent(ctx context.Context, about eras.ObjectRef, message string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(eras.StorageNamespace)
	nsri, _, err := k.resource(ctx, ns.GroupVersionKind(), "", false)
	if err != nil {
		return err
	}
	if _, err := nsri.Get(ctx, eras.StorageNamespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		err = k.retry(ctx, "create namespace "+eras.StorageNamespace, func() error { return createAbsent(ctx, nsri, ns) })
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
	ev.SetNamespace(eras.StorageNamespace)
	ev.SetName(fmt.Sprintf("lvmd-host-check.%s", assets.Sha256sum(message)[:16]))
	ri, _, err := k.resource(ctx, ev.GroupVersionKind(), eras.StorageNamespace, false)
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
	k.log.Info("recorded event", "namespace", eras.StorageNamespace, "reason", PreflightEventReason)
	return err
}

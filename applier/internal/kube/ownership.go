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
)

// How the applier proves an object MicroShift's before it deletes it (the other era's objects,
// the switched-off snapshot webhook's, a pruned component's), in this order:
//
//  1. OLM's marks veto everything: a label operators.coreos.com/… or olm.owner…, or an owner
//     reference to a ClusterServiceVersion (any operators.coreos.com owner) means an operator
//     installed through OLM owns the object, whatever else it carries.
//  2. Applied by the applier: FieldManager's entry of operation Apply in managedFields, and
//     content that matches what was applied — the applied-hash annotation is among the fields
//     that entry owns, and those fields' live values hash to it (appliedProof). An annotation
//     copied onto someone's object, or a field someone changed since (it moves to their entry),
//     fails the proof.
//  3. Created by MicroShift's start-up code before the applier, for the objects MicroShift
//     itself shipped under exactly these names (Candidate.Shipped): library-go's resourceapply
//     creates and updates without a field manager, so kube-apiserver records LegacyManager
//     ("microshift", from the User-Agent) with operation Update; the object must also contain
//     the content MicroShift's files gave it (Candidate.Shipped) and hold nothing MicroShift did
//     not ship: its bounded fields (boundedFields: rules, subjects, roleRef, SCC users, what a
//     workload runs as and mounts) within what one era shipped (Candidate.Bounds) — MicroShift's
//     rules plus one more rule is not MicroShift's Role (shippedProof). Any client calling itself
//     "microshift" is recorded the same way, so the name alone never proves anything, and an
//     Apply by that name is not MicroShift's old code at all. An object created with no content
//     at all (a ServiceAccount of just a name) records no writer, so nothing proves it: it is
//     left and reported, as the same object of an OLM install would be.
//  4. Created for an object the applier applied: a controller reference to the declared
//     controller (Candidate.Controller: the LVMCluster, for the vg-manager DaemonSet the LVMS
//     operator creates), with the live controller's UID, and that controller proven by 2 or 3.
//     A controller reference to anything else — the Namespace, say — proves nothing.
//
// Everything else is left on the cluster and reported (Report.Foreign and Report.Kept, with
// the proof that failed).

// LegacyManager is the field manager kube-apiserver records for MicroShift's storage code before
// the applier: it set none, so the server took the program name from the User-Agent,
// "microshift/<version> …", with operation Update (library-go's resourceapply creates and
// updates; it never applies).
const LegacyManager = "microshift"

// NotOwnedReason is how Result.Foreign objects are reported.
const NotOwnedReason = "not applied by MicroShift; left alone"

// Candidate is an object the applier may delete, with what may prove it MicroShift's.
type Candidate struct {
	Ref eras.ObjectRef
	// Shipped, for an object MicroShift's start-up code created before the applier under this
	// exact name, is content its files gave the object (lists match by element; a null value
	// asks only for the key): with LegacyManager's Update entry it proves the object. Nil: only
	// the applier's own apply does.
	Shipped map[string]any
	// Bounds are the bounded fields (BoundedFields) of the object as each era shipped it: a
	// live object proven by Shipped must also be within one of them. Shipped without Bounds
	// proves nothing.
	Bounds []map[string]any
	// Controller is the object whose controller creates this one (vg-manager ← LVMCluster),
	// proven by proofs 1–3 itself.
	Controller *Candidate
}

// Refs are the candidates' objects.
func Refs(cs []Candidate) []eras.ObjectRef {
	out := make([]eras.ObjectRef, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Ref)
	}
	return out
}

// olmMark names the OLM mark u carries ("" for none): such an object is an OLM install's.
func olmMark(u *unstructured.Unstructured) string {
	keys := make([]string, 0, len(u.GetLabels()))
	for k := range u.GetLabels() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "operators.coreos.com/") || k == "olm.owner" || strings.HasPrefix(k, "olm.owner.") || k == "olm.managed" {
			return fmt.Sprintf("label %s=%s", k, u.GetLabels()[k])
		}
	}
	for _, o := range u.GetOwnerReferences() {
		if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil && gv.Group == "operators.coreos.com" || o.Kind == "ClusterServiceVersion" {
			return fmt.Sprintf("owner %s %s", o.Kind, o.Name)
		}
	}
	return ""
}

// managedEntry returns u's managedFields entry of manager with operation op on the object
// itself (not a subresource), nil when there is none.
func managedEntry(u *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType) *metav1.ManagedFieldsEntry {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == op && mf.Subresource == "" {
			return &mf
		}
	}
	return nil
}

// writers lists u's field managers with their operations, for reasons: "kubectl (Update), olm (Apply)".
func writers(u *unstructured.Unstructured) string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		w := fmt.Sprintf("%s (%s", mf.Manager, mf.Operation)
		if mf.Subresource != "" {
			w += " " + mf.Subresource
		}
		if w += ")"; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return "no field manager recorded"
	}
	return "written by " + strings.Join(out, ", ")
}

// appliedProof checks proof 2: the applier's Apply entry, owning an AppliedContentAnnotation
// that the fields it owns still hash to. The reason says which part failed.
func appliedProof(u *unstructured.Unstructured) (bool, string) {
	e := managedEntry(u, FieldManager, metav1.ManagedFieldsOperationApply)
	if e == nil || e.FieldsV1 == nil {
		return false, fmt.Sprintf("no server-side apply by %s (%s)", FieldManager, writers(u))
	}
	owned, err := ownedContent(u.Object, e.FieldsV1.Raw)
	if err != nil {
		return false, fmt.Sprintf("changed since %s applied it: %v (%s)", FieldManager, err, writers(u))
	}
	want, _, _ := unstructured.NestedString(owned, "metadata", "annotations", AppliedContentAnnotation)
	if want == "" {
		return false, fmt.Sprintf("its %s annotation was not set by %s (%s)", AppliedContentAnnotation, FieldManager, writers(u))
	}
	if got, err := ownedHash(u, owned); err != nil || got != want {
		return false, fmt.Sprintf("changed since %s applied it: the fields it owns no longer match its %s (%s)", FieldManager, AppliedContentAnnotation, writers(u))
	}
	return true, ""
}

// contentHash is the AppliedContentAnnotation of u as the API server stores it (a dry run's
// answer): the hash of the fields the applier's Apply entry owns.
func contentHash(u *unstructured.Unstructured) (string, error) {
	e := managedEntry(u, FieldManager, metav1.ManagedFieldsOperationApply)
	if e == nil || e.FieldsV1 == nil {
		return "", fmt.Errorf("%s has no server-side apply entry of %s", u.GetName(), FieldManager)
	}
	owned, err := ownedContent(u.Object, e.FieldsV1.Raw)
	if err != nil {
		return "", err
	}
	return ownedHash(u, owned)
}

// ownedHash hashes owned, the fields the applier owns of u, without the AppliedContentAnnotation
// (which records this hash), with u's kind, namespace and name.
func ownedHash(u *unstructured.Unstructured, owned map[string]any) (string, error) {
	c := (&unstructured.Unstructured{Object: owned}).DeepCopy()
	if ann := c.GetAnnotations(); ann != nil {
		delete(ann, AppliedContentAnnotation)
		if len(ann) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
		} else {
			c.SetAnnotations(ann)
		}
	}
	c.SetKind(u.GetKind())
	c.SetName(u.GetName())
	c.SetNamespace(u.GetNamespace())
	return objectHash(c)
}

// shippedProof checks proof 3 for a candidate MicroShift shipped before the applier: the
// legacy writer's Update entry, the content MicroShift shipped (shipped ⊆ live), and nothing
// else in the bounded fields (live ⊆ what one era shipped).
func shippedProof(u *unstructured.Unstructured, c Candidate) (bool, string) {
	if c.Shipped == nil {
		return false, ""
	}
	if managedEntry(u, LegacyManager, metav1.ManagedFieldsOperationUpdate) == nil {
		return false, fmt.Sprintf("not created by MicroShift's start-up either (no %q Update entry)", LegacyManager)
	}
	if path, ok := matchesShipped(u.Object, c.Shipped, ""); !ok {
		return false, fmt.Sprintf("not the %s MicroShift shipped: %s differs", u.GetKind(), path)
	}
	if len(c.Bounds) == 0 {
		return false, fmt.Sprintf("not proven the %s MicroShift shipped: no era's content of it is recorded", u.GetKind())
	}
	if path, ok := withinBounds(u.Object, c.Bounds); !ok {
		return false, fmt.Sprintf("not the %s MicroShift shipped: %s is not in what any era shipped (%s)", u.GetKind(), path, writers(u))
	}
	return true, ""
}

// ShippedMatches reports whether obj has the content shipped declares (Candidate.Shipped's
// rule), and else the first path that differs: the applier's tests hold its declarations to the
// assets with it.
func ShippedMatches(obj, shipped map[string]any) (string, bool) {
	return matchesShipped(obj, shipped, "")
}

// matchesShipped reports whether live has everything shipped has: map keys with matching values
// (a nil value asks only for the key), every element of a shipped list matched by some live
// element. It returns the first path that differs.
func matchesShipped(live, shipped any, path string) (string, bool) {
	switch s := shipped.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return orTop(path), false
		}
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			lv, ok := l[k]
			if !ok {
				return orTop(path + "." + k), false
			}
			if s[k] == nil {
				continue
			}
			if p, ok := matchesShipped(lv, s[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return orTop(path), false
		}
		for i, want := range s {
			if !slices.ContainsFunc(l, func(lv any) bool { _, ok := matchesShipped(lv, want, ""); return ok }) {
				return fmt.Sprintf("%s[%d]", orTop(path), i), false
			}
		}
		return "", true
	}
	if !contains(live, shipped) {
		return orTop(path), false
	}
	return "", true
}

// proveOwned decides whether u, found for c, is MicroShift's (proofs 1–4); when it is not, the
// reason says why.
func (k *Client) proveOwned(ctx context.Context, u *unstructured.Unstructured, c Candidate) (bool, string, error) {
	ok, why := proveDirect(u, c)
	if ok || c.Controller == nil || strings.HasPrefix(why, olmReason) {
		return ok, why, nil
	}
	ok, whyCtrl, err := k.controllerProof(ctx, u, *c.Controller)
	if ok || err != nil {
		return ok, "", err
	}
	return false, why + "; " + whyCtrl, nil
}

// olmReason starts the reason of an object OLM's marks veto.
const olmReason = "installed through OLM"

// proveDirect checks proofs 1–3 on u itself.
func proveDirect(u *unstructured.Unstructured, c Candidate) (bool, string) {
	if mark := olmMark(u); mark != "" {
		return false, olmReason + " (" + mark + ")"
	}
	ok, why := appliedProof(u)
	if ok {
		return true, ""
	}
	ok, whyShipped := shippedProof(u, c)
	if ok {
		return true, ""
	}
	if whyShipped != "" {
		why += "; " + whyShipped
	}
	return false, why
}

// controllerProof checks proof 4: u's controller is want, alive with the referenced UID, and
// itself proven MicroShift's (by proofs 1–3).
func (k *Client) controllerProof(ctx context.Context, u *unstructured.Unstructured, wantCand Candidate) (bool, string, error) {
	want := wantCand.Ref
	ctrl := metav1.GetControllerOfNoCopy(u)
	if ctrl == nil {
		return false, "no controller reference to " + want.String(), nil
	}
	gv, err := schema.ParseGroupVersion(ctrl.APIVersion)
	if err != nil || gv.Group != want.Group || ctrl.Kind != want.Kind || ctrl.Name != want.Name || u.GetNamespace() != want.Namespace {
		return false, fmt.Sprintf("controlled by %s %s, not by %s", ctrl.Kind, ctrl.Name, want), nil
	}
	owner, err := k.getLive(ctx, want)
	if err != nil || owner == nil {
		return false, "its controller " + want.String() + " is gone", err
	}
	if owner.GetUID() != ctrl.UID {
		return false, fmt.Sprintf("its controller reference names UID %s, not the live %s", ctrl.UID, want), nil
	}
	if ok, why := proveDirect(owner, wantCand); !ok {
		return false, fmt.Sprintf("its controller %s is not proven MicroShift's: %s", want, why), nil
	}
	return true, "", nil
}

// getLive reads ref; nil without error when it or its API does not exist.
func (k *Client) getLive(ctx context.Context, ref eras.ObjectRef) (*unstructured.Unstructured, error) {
	ri, _, err := k.resource(ctx, ref.GroupVersionKind(), ref.Namespace, false)
	if meta.IsNoMatchError(err) {
		return nil, nil
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
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", ref, err)
	}
	return u, nil
}

// liveObject is an object found on the cluster that the applier may delete: proven its own, with
// the UID the delete is conditioned on (a replacement created meanwhile is never deleted).
type liveObject struct {
	ref eras.ObjectRef
	ri  dynamic.ResourceInterface
	uid types.UID
}

// lookupOwned reads the candidates and returns those that exist and are provably MicroShift's,
// in their order. Existing objects it cannot prove are recorded in rep.Foreign and rep.Kept with
// the reason (and a warning names them); absent objects and APIs cost one GET each and are
// skipped.
func (k *Client) lookupOwned(ctx context.Context, cands []Candidate, rep *Report) ([]liveObject, error) {
	var out []liveObject
	var foreign []string
	for _, c := range cands {
		u, err := k.getLive(ctx, c.Ref)
		if err != nil || u == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		ok, why, err := k.proveOwned(ctx, u, c)
		if err != nil {
			return nil, fmt.Errorf("checking who applied %s: %w", c.Ref, err)
		}
		if !ok {
			if !slices.ContainsFunc(rep.Foreign, c.Ref.SameObject) {
				rep.Foreign = append(rep.Foreign, c.Ref)
				rep.Kept = append(rep.Kept, Skip{Object: c.Ref, Reason: NotOwnedReason + ": " + why})
				foreign = append(foreign, c.Ref.String()+" ("+why+")")
			}
			continue
		}
		ri, _, err := k.resource(ctx, c.Ref.GroupVersionKind(), c.Ref.Namespace, false)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", c.Ref, err)
		}
		out = append(out, liveObject{ref: c.Ref, ri: ri, uid: u.GetUID()})
	}
	if len(foreign) > 0 {
		msg := NotOwnedReason + ": " + strings.Join(foreign, "; ")
		k.log.Warn(msg)
		rep.Warnings = append(rep.Warnings, msg)
	}
	return out, nil
}

// workloadKinds are the kinds an object of the same name as MicroShift's must not be taken over
// by apply: a Deployment or DaemonSet someone else runs (an LVMS installed through OLM, a
// snapshot controller of another distribution) would be silently replaced by MicroShift's.
var workloadKinds = []string{"Deployment", "DaemonSet"}

// InTheWayError is a workload of the name MicroShift applies that is not MicroShift's: it is
// neither changed nor deleted, and its component fails.
type InTheWayError struct {
	Object eras.ObjectRef
	// File is the asset that declares MicroShift's object.
	File string
	// Why names what makes it someone else's: OLM's mark, or its field managers.
	Why string
}

func (e *InTheWayError) Error() string {
	return fmt.Sprintf("%s (from %s) is in the way: an object of that name exists and is not MicroShift's (%s); it was neither changed nor deleted. "+
		"Remove it (for an OLM install, uninstall that operator through OLM), or switch its component off in MicroShift's storage configuration, then start again",
		e.Object, e.File, e.Why)
}

// inTheWay returns an *InTheWayError when live, a workload MicroShift is about to apply over, is
// not MicroShift's: OLM's marks, or neither the applier's Apply entry nor MicroShift's own
// start-up code's Update entry (the same Deployment before the applier, taken over on the first
// start with it).
func inTheWay(live *unstructured.Unstructured, file string) error {
	if !slices.Contains(workloadKinds, live.GetKind()) {
		return nil
	}
	ref := eras.ObjectRef{Group: live.GroupVersionKind().Group, Version: live.GroupVersionKind().Version, Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName()}
	if mark := olmMark(live); mark != "" {
		return &InTheWayError{Object: ref, File: file, Why: olmReason + ", " + mark + "; " + writers(live)}
	}
	if managedEntry(live, FieldManager, metav1.ManagedFieldsOperationApply) != nil || managedEntry(live, LegacyManager, metav1.ManagedFieldsOperationUpdate) != nil {
		return nil
	}
	return &InTheWayError{Object: ref, File: file, Why: writers(live)}
}

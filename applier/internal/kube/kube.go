// Package kube is the applier's API-server side: one Client per Apply that waits for the server,
// applies objects server-side only when the live state differs (recording an applied-hash),
// deletes only what it can prove MicroShift applied, reports or prunes switched-off components,
// waits for CRDs and workloads, creates the default VolumeSnapshotClass and records the preflight
// Event. Credentials of the server URL never reach an error or log line.
package kube

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/redact"
)

// Names the applier writes into objects and the API server's records.
const (
	// FieldManager owns every field the applier sets, so repeated applies never conflict with
	// themselves and kubectl shows who set what.
	FieldManager = "microshift-storage"
	// AppliedHashAnnotation records a hash of the applied object, so that fields removed from the
	// assets are noticed even though the live object still contains everything that was sent.
	AppliedHashAnnotation = "lvms.microshift.io/applied-hash"
	// AppliedContentAnnotation records a hash of what the API server stores of the fields the
	// applier owns (server defaults inside them included; a dry run shows it before the apply).
	// It is how a later deletion proves the object's content still what the applier applied
	// (appliedProof).
	AppliedContentAnnotation = "lvms.microshift.io/applied-content"
)

// Options configures a Client: the applier's Options that concern the API server.
type Options struct {
	RESTConfig *rest.Config
	Logger     *slog.Logger
	// WaitTimeout bounds readiness, CRD and discovery waits and the retries of one request;
	// DeleteTimeout the wait for deleted objects to go; PollInterval is the readiness poll.
	WaitTimeout, DeleteTimeout, PollInterval time.Duration
	// Prune deletes the remaining objects of a switched-off component (Remaining); ForcePrune
	// does so for storage although volumes or snapshots of the driver exist.
	Prune, ForcePrune bool
}

// Skip is an object that was not applied and why.
type Skip struct {
	Object eras.ObjectRef
	Reason string
}

// Report collects what a Client did, each list in the order it happened; the applier copies it
// into its Result.
type Report struct {
	Created, Updated, Deleted, Unchanged []eras.ObjectRef
	// Remaining are objects of a switched-off component still on the cluster (without Prune all
	// that were found, with Prune those it did not delete); Foreign those the Client would have
	// deleted but cannot prove MicroShift's (NotOwnedReason).
	Remaining, Foreign []eras.ObjectRef
	Skipped            []Skip
	// Kept are the objects the Client would have deleted and left on the cluster, each with why.
	Kept []Skip
	// Warnings are non-fatal conditions, also logged.
	Warnings []string
}

// Client is one connection to the API server for the duration of an Apply.
type Client struct {
	o      Options
	log    *slog.Logger
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// crdKinds are the kinds served by CRDs applied in this run.
	crdKinds map[schema.GroupKind]bool
}

// Connect builds the clients and waits, with exponential backoff, until the API server answers
// or ctx ends: on boot MicroShift starts the applier while kube-apiserver is still coming up.
func Connect(ctx context.Context, o Options) (*Client, error) {
	cfg := *o.RESTConfig
	if cfg.UserAgent == "" {
		cfg.UserAgent = FieldManager
	}
	if cfg.WarningHandler == nil {
		cfg.WarningHandler = slogWarnings{o.Logger}
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		// client-go's default of 5 QPS turns ~80 GETs and applies into 15 s of client-side
		// throttling; kubectl uses the same 50/300.
		cfg.QPS, cfg.Burst = 50, 300
	}
	// Discovery and the RESTMapper call the API with context.TODO() before client-go 0.37, so
	// their requests are bound to this Apply's ctx here: a server that accepts connections but
	// never answers must not hold Apply past the caller's deadline.
	dcfg := rest.CopyConfig(&cfg)
	dcfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return ctxRoundTripper{ctx: ctx, next: rt} })
	disc, err := discovery.NewDiscoveryClientForConfig(dcfg)
	if err != nil {
		return nil, redactErr(fmt.Errorf("creating discovery client for %s: %w", cfg.Host, err), cfg.Host)
	}
	dyn, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		return nil, redactErr(fmt.Errorf("creating dynamic client for %s: %w", cfg.Host, err), cfg.Host)
	}
	if err := waitReachable(ctx, o, &cfg, disc); err != nil {
		return nil, err
	}
	return &Client{
		o:      o,
		log:    o.Logger,
		dyn:    dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}, nil
}

// waitReachable asks for the server version, with exponential backoff, until the API server
// answers, rejects the credentials or certificate, or ctx ends.
func waitReachable(ctx context.Context, o Options, cfg *rest.Config, disc discovery.DiscoveryInterface) error {
	var err error
	var attempts int
	ctxErr := backoffUntil(ctx, 100*time.Millisecond, func(n int, retryIn time.Duration) bool {
		attempts = n
		if _, err = disc.ServerVersion(); err == nil || permanentConnectError(err) {
			return true
		}
		o.Logger.Info("API server not reachable yet, retrying", "host", redact.URL(cfg.Host), "attempt", n, "retryIn", retryIn, "error", redactErr(err, cfg.Host))
		return false
	})
	switch {
	case ctxErr != nil:
		return redactErr(fmt.Errorf("API server %s not reachable after %d attempts: %w (last error: %w)", cfg.Host, attempts, ctxErr, err), cfg.Host)
	case err != nil:
		return redactErr(fmt.Errorf("API server %s rejected the connection (check the kubeconfig's credentials and CA): %w", cfg.Host, err), cfg.Host)
	}
	return nil
}

// RunComponent applies one component's CRDs, waits for them, deletes its declared legacy objects
// (those it can prove MicroShift's) and applies the rest, recording the outcome in rep.
func (k *Client) RunComponent(ctx context.Context, objs []assets.Object, deletes []Candidate, rep *Report) error {
	var crds, rest []assets.Object
	for _, ob := range objs {
		if ob.Obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, ob)
		} else {
			rest = append(rest, ob)
		}
	}
	if err := k.applyAll(ctx, crds, rep); err != nil {
		return err
	}
	if err := k.waitEstablished(ctx, crds); err != nil {
		return err
	}
	if err := k.deleteLegacy(ctx, deletes, rep); err != nil {
		return err
	}
	// Objects of one kind do not depend on each other, so each run of equal kinds (the plan is
	// sorted by kind) is applied concurrently; the kinds themselves stay in the declared order.
	for start := 0; start < len(rest); {
		end := start + 1
		for end < len(rest) && assets.KindRank(rest[end].Obj.GetKind()) == assets.KindRank(rest[start].Obj.GetKind()) {
			end++
		}
		if err := k.applyAll(ctx, rest[start:end], rep); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// applyParallelism bounds the concurrent requests of applyAll; the client's QPS limit (50)
// still applies on top.
const applyParallelism = 8

// applyAll applies objs concurrently and records the outcomes in objs' order, so the result is
// deterministic. Failures are returned joined, after all have finished.
func (k *Client) applyAll(ctx context.Context, objs []assets.Object, rep *Report) error {
	outs := make([]Report, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, applyParallelism)
	var wg sync.WaitGroup
	for i := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			errs[i] = k.apply(ctx, objs[i], &outs[i])
		}(i)
	}
	wg.Wait()
	for i := range outs {
		rep.Created = append(rep.Created, outs[i].Created...)
		rep.Updated = append(rep.Updated, outs[i].Updated...)
		rep.Unchanged = append(rep.Unchanged, outs[i].Unchanged...)
		rep.Skipped = append(rep.Skipped, outs[i].Skipped...)
		rep.Warnings = append(rep.Warnings, outs[i].Warnings...)
	}
	return errors.Join(errs...)
}

func (k *Client) resource(ctx context.Context, gvk schema.GroupVersionKind, ns string, wait bool) (dynamic.ResourceInterface, bool, error) {
	var mapping *meta.RESTMapping
	var lastErr error
	err := k.poll(ctx, k.o.WaitTimeout, k.shortPoll(), func() (bool, error) {
		m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) && wait {
			k.mapper.Reset() // a CRD applied moments ago may not be in discovery yet
			return false, nil
		}
		if err != nil && transient(err) {
			// Discovery runs again after every Reset; an API server restarting at that moment
			// is retried like any other request.
			lastErr = err
			return false, nil
		}
		mapping = m
		return true, err
	})
	if err != nil && lastErr != nil {
		return nil, false, fmt.Errorf("discovering %s: %w (last error: %w)", gvk, err, lastErr)
	}
	if err != nil {
		return nil, false, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		return k.dyn.Resource(mapping.Resource), false, nil
	}
	return k.dyn.Resource(mapping.Resource).Namespace(ns), true, nil
}

// apply creates or server-side applies one object, skipping it when the live object already
// matches: an SSA of an unchanged object is still a PATCH, and a restart must not write.
func (k *Client) apply(ctx context.Context, ob assets.Object, rep *Report) error {
	u := ob.Obj.DeepCopy()
	gvk := u.GroupVersionKind()
	ri, namespaced, err := k.resource(ctx, gvk, u.GetNamespace(), k.providedByCRD(gvk))
	if meta.IsNoMatchError(err) {
		reason := fmt.Sprintf("API %s is not served by this cluster", gvk.GroupVersion())
		k.log.Warn("skipping object", "object", assets.RefOf(u), "file", ob.File, "reason", reason)
		rep.Skipped = append(rep.Skipped, Skip{Object: assets.RefOf(u), Reason: reason})
		return nil
	}
	if err != nil {
		return fmt.Errorf("applying %s from %s: %w", assets.RefOf(u), ob.File, err)
	}
	if !namespaced {
		u.SetNamespace("") // some CSV-derived assets put a namespace on cluster-scoped objects
	}
	ref := assets.RefOf(u)
	var live *unstructured.Unstructured
	err = k.retry(ctx, "get "+ref.String(), func() (err error) {
		live, err = ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		return err
	})
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading %s (from %s): %w", ref, ob.File, err)
	}

	if assets.IsCreateOnly(gvk.Kind) {
		return k.createOnly(ctx, ri, u, ob.File, exists, rep)
	}
	if exists && gvk.Kind == "CustomResourceDefinition" && k.leftToOthers(live, u, rep) {
		return nil
	}
	if exists {
		if err := inTheWay(live, ob.File); err != nil {
			return err
		}
	}

	hash, err := setAppliedHash(u)
	if err != nil {
		return fmt.Errorf("hashing %s: %w", ref, err)
	}
	if exists && live.GetAnnotations()[AppliedHashAnnotation] == hash && live.GetAnnotations()[AppliedContentAnnotation] != "" && contains(live.Object, u.Object) {
		rep.Unchanged = append(rep.Unchanged, ref)
		return nil
	}
	err = k.retry(ctx, "apply "+ref.String(), func() error { return applyRecorded(ctx, ri, u, true) })
	if err != nil {
		return fmt.Errorf("applying %s from %s: %w", ref, ob.File, err)
	}
	if exists {
		k.log.Info("updated", "object", ref)
		rep.Updated = append(rep.Updated, ref)
	} else {
		k.log.Info("created", "object", ref)
		rep.Created = append(rep.Created, ref)
	}
	return nil
}

// leftToOthers reports whether an existing CRD is someone else's: another field manager wrote
// its spec (labels or annotations alone do not count, and status is the API server's). Such a
// CRD is not applied: MicroShift's own
// CRD start-up (pkg/assets/crd.go) applies the storage CRDs before the applier runs, and two
// writers would take turns changing it. It is recorded as skipped; differing from the assets is
// a warning, since the other writer is then older or newer than these assets.
func (k *Client) leftToOthers(live, u *unstructured.Unstructured, rep *Report) bool {
	var others []string
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != FieldManager && mf.Subresource == "" && ownsSpec(mf) && !slices.Contains(others, mf.Manager) {
			others = append(others, mf.Manager)
		}
	}
	if len(others) == 0 {
		return false
	}
	ref := assets.RefOf(u)
	reason := fmt.Sprintf("applied by another field manager (%s); left to it", strings.Join(others, ", "))
	rep.Skipped = append(rep.Skipped, Skip{Object: ref, Reason: reason})
	k.log.Debug("skipping object", "object", ref, "reason", reason)
	if !contains(live.Object, u.Object) {
		w := fmt.Sprintf("%s differs from the assets but is %s", ref, reason)
		k.log.Warn(w)
		rep.Warnings = append(rep.Warnings, w)
	}
	return true
}

// ownsSpec reports whether a managedFields entry sets fields under spec.
func ownsSpec(mf metav1.ManagedFieldsEntry) bool {
	if mf.FieldsV1 == nil {
		return false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
		return true // unreadable: assume the worst and leave the object alone
	}
	_, ok := fields["f:spec"]
	return ok
}

// createOnly creates an object of a create-only kind when it is absent; an existing one belongs
// to the administrator and is left as it is.
func (k *Client) createOnly(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured, file string, exists bool, rep *Report) error {
	ref := assets.RefOf(u)
	if exists {
		rep.Unchanged = append(rep.Unchanged, ref)
		return nil
	}
	// The applied-hash marks it as created by MicroShift, so what the operator creates for it
	// (vg-manager) can be proven MicroShift's on a rollback; it is never compared.
	if _, err := setAppliedHash(u); err != nil {
		return fmt.Errorf("hashing %s: %w", ref, err)
	}
	// The operator's validating webhook may match the LVMCluster before the operator serves it
	// (the Deployment was applied moments ago), so webhook failures are retried like an
	// unreachable API server.
	err := k.retry(ctx, "create "+ref.String(), func() error { return applyRecorded(ctx, ri, u, false) })
	if err != nil {
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			rep.Unchanged = append(rep.Unchanged, ref)
			return nil
		}
		return fmt.Errorf("creating %s from %s: %w", ref, file, err)
	}
	k.log.Info("created", "object", ref)
	rep.Created = append(rep.Created, ref)
	return nil
}

// createAbsent creates u, known to be absent a moment ago, with a server-side apply that
// refuses to take over fields someone else set meanwhile (no Force: a conflict, reported as
// such). A plain POST does the same, but kube-apiserver answers a POST of a custom resource
// whose CRD was established moments ago only after ~2 s, while the apply PATCH takes
// milliseconds: that one request was most of a first start.
func createAbsent(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured) error {
	_, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager})
	return err
}

// applyRecorded server-side applies u (with Force, or refusing others' fields) and records in
// its AppliedContentAnnotation what the API server stores of the applier's fields: a dry run of
// the same apply shows it, server defaults included, so the record is exact whatever the API
// server fills in (a fieldRef's apiVersion inside an atomic field, say).
func applyRecorded(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured, force bool) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: force}
	dry := opts
	dry.DryRun = []string{metav1.DryRunAll}
	out, err := ri.Apply(ctx, u.GetName(), u, dry)
	if err != nil {
		return err
	}
	content, err := contentHash(out)
	if err != nil {
		return fmt.Errorf("recording the applied content: %w", err)
	}
	rec := u.DeepCopy()
	ann := rec.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AppliedContentAnnotation] = content
	rec.SetAnnotations(ann)
	_, err = ri.Apply(ctx, rec.GetName(), rec, opts)
	return err
}

// providedByCRD reports whether gvk is not a built-in kind, so a missing mapping may just be
// discovery lagging behind a CRD that was applied in this run.
func (k *Client) providedByCRD(gvk schema.GroupVersionKind) bool {
	return !assets.IsBuiltin(gvk) && k.crdKinds[gvk.GroupKind()]
}

// setAppliedHash records the hash of u as sent in its AppliedHashAnnotation and returns it.
func setAppliedHash(u *unstructured.Unstructured) (string, error) {
	hash, err := objectHash(u)
	if err != nil {
		return "", err
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AppliedHashAnnotation] = hash
	u.SetAnnotations(ann)
	return hash, nil
}

// objectHash is a stable digest of the object as it will be sent (encoding/json sorts map keys).
func objectHash(u *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// contains reports whether every value in want is present and equal in live. Server defaults and
// fields owned by others only ever add to live, so subset equality means an apply would change
// nothing we own.
func contains(live, want any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case map[string]any:
		if len(w) == 0 {
			return true
		}
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for key, wv := range w {
			lv, ok := l[key]
			if !ok {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !contains(lv, wv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return len(w) == 0 && live == nil
		}
		if len(l) != len(w) {
			return false
		}
		for i := range w {
			if !contains(l[i], w[i]) {
				return false
			}
		}
		return true
	default:
		if wf, ok := number(want); ok {
			lf, ok := number(live)
			return ok && lf == wf
		}
		return reflect.DeepEqual(live, want)
	}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

func (k *Client) waitEstablished(ctx context.Context, crds []assets.Object) error {
	if len(crds) == 0 {
		return nil
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if k.crdKinds == nil {
		k.crdKinds = map[schema.GroupKind]bool{}
	}
	for _, c := range crds {
		group, _, _ := unstructured.NestedString(c.Obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Obj.Object, "spec", "names", "kind")
		k.crdKinds[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	for _, c := range crds {
		name := c.Obj.GetName()
		var last string
		err := k.poll(ctx, k.o.WaitTimeout, k.shortPoll(), func() (bool, error) {
			u, err := k.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			last = "condition Established is not True"
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established (%s): %w", name, last, err)
		}
	}
	k.mapper.Reset()
	return nil
}

// deleteLegacy removes the objects of the other era (or of a switched-off snapshot webhook) that
// the applier can prove MicroShift's, and waits until they are gone, bounded by DeleteTimeout.
// The rest are reported in Report.Foreign and Report.Kept and left alone.
func (k *Client) deleteLegacy(ctx context.Context, cands []Candidate, rep *Report) error {
	found, err := k.lookupOwned(ctx, cands, rep)
	if err != nil {
		return fmt.Errorf("legacy objects: %w", err)
	}
	_, err = k.deleteObjects(ctx, found, rep)
	return err
}

// deleteObjects deletes objs, each on condition that its UID is still the one checked, and waits
// until all are gone, bounded by one DeleteTimeout. It returns the objects it did not delete
// (replaced since they were checked, recorded in rep.Kept).
func (k *Client) deleteObjects(ctx context.Context, objs []liveObject, rep *Report) ([]liveObject, error) {
	var kept []liveObject
	for _, o := range objs {
		policy := metav1.DeletePropagationBackground
		opts := metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &o.uid}}
		err := k.retry(ctx, "delete "+o.ref.String(), func() error { return o.ri.Delete(ctx, o.ref.Name, opts) })
		if apierrors.IsConflict(err) {
			// Replaced since it was checked: the new object is not the one proven ours.
			kept = append(kept, o)
			rep.Kept = append(rep.Kept, Skip{Object: o.ref, Reason: "replaced by another object of the same name since it was proven MicroShift's; left alone"})
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return kept, fmt.Errorf("deleting %s: %w", o.ref, err)
		}
		k.log.Info("deleted", "object", o.ref)
		rep.Deleted = append(rep.Deleted, o.ref)
	}
	// One deadline for all of them: objects that each take almost DeleteTimeout to go must
	// not stretch the wait to len(objs) times the bound.
	wctx, cancel := context.WithTimeout(ctx, k.o.DeleteTimeout)
	defer cancel()
	for _, o := range objs {
		err := k.poll(wctx, k.o.DeleteTimeout, k.shortPoll(), func() (bool, error) {
			u, err := o.ri.Get(wctx, o.ref.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err) || err == nil && u.GetUID() != o.uid, nil
		})
		if err != nil {
			return kept, fmt.Errorf("waiting for %s to be deleted: %w", o.ref, err)
		}
	}
	return kept, nil
}

// WaitReady waits until every workload exists and its rollout is complete, bounded by
// WaitTimeout.
func (k *Client) WaitReady(ctx context.Context, refs []eras.ObjectRef) error {
	ctx, cancel := context.WithTimeout(ctx, k.o.WaitTimeout)
	defer cancel()
	for _, ref := range refs {
		var state string
		err := k.poll(ctx, k.o.WaitTimeout, k.o.PollInterval, func() (bool, error) {
			ri, _, err := k.resource(ctx, ref.GroupVersionKind(), ref.Namespace, false)
			if err != nil {
				return false, err
			}
			u, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				state = "not created yet"
				return false, nil
			}
			if err != nil {
				state = err.Error()
				return false, nil
			}
			var ok bool
			ok, state = rolloutComplete(u)
			return ok, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to be ready (%s): %w", ref, state, err)
		}
		k.log.Info("ready", "object", ref)
	}
	return nil
}

// rolloutComplete mirrors `kubectl rollout status` for Deployments and DaemonSets.
func rolloutComplete(u *unstructured.Unstructured) (bool, string) {
	gen := u.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if observed < gen {
		return false, fmt.Sprintf("generation %d not observed yet (observed %d)", gen, observed)
	}
	st := func(f string) int64 { v, _, _ := unstructured.NestedInt64(u.Object, "status", f); return v }
	switch u.GetKind() {
	case "Deployment":
		want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		if st("updatedReplicas") < want || st("availableReplicas") < want {
			return false, fmt.Sprintf("%d/%d updated, %d/%d available", st("updatedReplicas"), want, st("availableReplicas"), want)
		}
		// During a rolling update the old pod keeps availableReplicas up while the new one starts;
		// kubectl waits for it to terminate, and so must we, or the new pod is never checked.
		if old := st("replicas") - st("updatedReplicas"); old > 0 {
			return false, fmt.Sprintf("%d old replicas pending termination", old)
		}
	case "DaemonSet":
		want := st("desiredNumberScheduled")
		if want == 0 || st("updatedNumberScheduled") < want || st("numberAvailable") < want {
			return false, fmt.Sprintf("%d/%d updated, %d/%d available", st("updatedNumberScheduled"), want, st("numberAvailable"), want)
		}
	}
	return true, "ready"
}

// poll calls f every interval until it returns true, an error, or timeout/ctx ends
// (wait.PollUntilContextTimeout); running out of time is reported with the timeout.
func (k *Client) poll(ctx context.Context, timeout, interval time.Duration, f func() (bool, error)) error {
	var condErr error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		ok, err := f()
		condErr = err
		return ok, err
	})
	if err != nil && condErr == nil {
		return fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	return err
}

// maxRetryDelay caps the exponential backoff of connect and retry.
const maxRetryDelay = 5 * time.Second

// backoffUntil calls attempt (numbered from 1) until it reports done or ctx ends, waiting after
// each failed attempt twice as long as after the previous one, from first up to maxRetryDelay.
// attempt learns the wait that follows it, for its log line. It returns ctx's error when ctx
// ended first.
func backoffUntil(ctx context.Context, first time.Duration, attempt func(n int, retryIn time.Duration) (done bool)) error {
	delays := wait.Backoff{Duration: first, Factor: 2, Cap: maxRetryDelay, Steps: math.MaxInt32}.DelayFunc()
	upcoming := delays()
	next := func() time.Duration { d := upcoming; upcoming = delays(); return d }
	n := 0
	// sliding: each wait starts when the attempt has returned, however long it took.
	return wait.DelayFunc(next).Until(ctx, true, true, func(context.Context) (bool, error) {
		n++
		return attempt(n, upcoming), nil
	})
}

// shortPoll is the interval for waits that normally end within a second (CRD establishment,
// discovery catching up, deletions without finalizers): polling those at the readiness interval
// would add a second per CRD to every first start.
func (k *Client) shortPoll() time.Duration { return min(k.o.PollInterval, 100*time.Millisecond) }

// retry calls f until it succeeds, fails with a non-transient error, WaitTimeout passes or ctx
// ends. Every write is idempotent (apply, create-if-absent, delete), so repeating one is safe.
func (k *Client) retry(ctx context.Context, what string, f func() error) error {
	deadline := time.Now().Add(k.o.WaitTimeout)
	var err error
	var attempts int
	ctxErr := backoffUntil(ctx, 200*time.Millisecond, func(n int, retryIn time.Duration) bool {
		attempts, err = n, f()
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return true
		}
		k.log.Info("transient API error, retrying", "op", what, "attempt", n, "retryIn", retryIn, "error", err)
		return false
	})
	if ctxErr != nil {
		return fmt.Errorf("%w (gave up after %d attempts: %w)", err, attempts, ctxErr)
	}
	return err
}

// transient reports errors worth retrying: the API server restarting or overloaded, and an
// admission webhook whose server is not up yet.
func transient(err error) bool {
	switch {
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err):
		return true
	case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed calling webhook"):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return true
	}
	return false
}

// permanentConnectError reports errors that waiting cannot fix: rejected credentials and a
// server certificate the kubeconfig does not trust. Retrying them until the deadline would
// only hide a misconfiguration for minutes. (403 is not here: RBAC may still be bootstrapping.)
func permanentConnectError(err error) bool {
	if apierrors.IsUnauthorized(err) {
		return true
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// ctxRoundTripper ends requests when the Apply's context ends, on top of their own context:
// client-go's discovery (before 0.37) uses context.TODO() with a 32 s timeout.
type ctxRoundTripper struct {
	ctx  context.Context
	next http.RoundTripper
}

func (c ctxRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	stop := context.AfterFunc(c.ctx, func() { cancel(context.Cause(c.ctx)) })
	done := func() { stop(); cancel(nil) }
	resp, err := c.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		done()
		return nil, err
	}
	// The body is read after RoundTrip returns; the merged context lives until it is closed.
	resp.Body = &closeHook{ReadCloser: resp.Body, onClose: done}
	return resp, nil
}

// closeHook runs onClose once the body is closed.
type closeHook struct {
	io.ReadCloser
	once    sync.Once
	onClose func()
}

func (c *closeHook) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.onClose)
	return err
}

// slogWarnings sends API warnings (deprecated fields, dropped unknown fields) to the logger
// instead of klog's stderr.
type slogWarnings struct{ log *slog.Logger }

func (w slogWarnings) HandleWarningHeader(code int, agent, text string) {
	if code == 299 && text != "" {
		w.log.Warn("API server warning", "warning", text)
	}
}

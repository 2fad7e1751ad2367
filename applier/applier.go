// Package applier is the runtime library MicroShift embeds to deploy storage: it renders the LVMS
// (or, before 4.17, TopoLVM) and CSI snapshot assets written by lvms-rebase and applies them to
// the API server. It is a module of its own (Go 1.22, client-go v0.30 and later) so that every
// LVMS-era MicroShift branch can import it; docs/embedding.md shows the call.
//
// Apply checks the storage configuration and the assets before touching the API: a bad storage
// section, or assets that identify no era, apply and delete nothing. The two components are
// isolated: a bad lvmd.yaml (an *LvmdError naming the field) fails the storage driver only, and
// the CSI snapshot controller is still applied. Apply is idempotent: objects are compared with the
// live state first and server-side applied only when they differ, so an unchanged restart sends no
// mutating request. Era differences (lvmd ConfigMap and pod-template checksum vs. the runtime
// lvmd copy, the 4.17 TopoLVM clean-up) are declared data selected by the assets themselves.
// WatchLvmd keeps the LVMS runtime lvmd copy in sync with the user's file.
package applier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
)

// Defaults for Options fields left empty.
const (
	DefaultLvmdPath        = "/etc/microshift/lvmd.yaml"
	DefaultRuntimeLvmdPath = "/var/lib/microshift/lvms/lvmd.yaml"
	// FieldManager owns every field the applier sets, so repeated applies never conflict with
	// themselves and kubectl shows who set what.
	FieldManager = kube.FieldManager
	// AppliedHashAnnotation records a hash of the applied object, so that fields removed from the
	// assets are noticed even though the live object still contains everything that was sent.
	AppliedHashAnnotation = kube.AppliedHashAnnotation
	// lvmdChecksumAnnotation is the pod-template annotation the TopoLVM node DaemonSet template sets.
	lvmdChecksumAnnotation = "lvms.microshift.io/lvmd_config_sha256sum"
)

// Options configures Apply. Only Assets and RESTConfig are required.
type Options struct {
	// Assets is rooted at a MicroShift assets/ directory: components/lvms/*.yaml,
	// components/csi-snapshot-controller/*.yaml and release/release-<arch>.json.
	Assets fs.FS
	// Arch is the MicroShift architecture name (x86_64, aarch64); default: the running one.
	Arch string
	// Images are the arch's images with underscore keys (`.ReleaseImage.<key>` in templates);
	// default: read from Assets' release/release-<Arch>.json.
	Images map[string]string
	// Storage is the storage section of MicroShift's config.
	Storage StorageConfig
	// LvmdPath is the user's lvmd config; default DefaultLvmdPath. When it does not exist the
	// configuration is derived from the volume groups.
	LvmdPath string
	// VolumeGroups lists the host's volume groups; default VGSLister{} (runs vgs). ErrNoLVM from
	// it means LVM is not installed, which disables storage with a warning.
	VolumeGroups VolumeGroupLister
	// RuntimeLvmdPath is where the LVMS era writes the lvmd copy vg-manager reads; default
	// DefaultRuntimeLvmdPath.
	RuntimeLvmdPath string
	// RESTConfig reaches the API server.
	RESTConfig *rest.Config
	// Logger receives progress; default slog.Default().
	Logger *slog.Logger
	// Wait waits for the storage and snapshot workloads to become ready, up to WaitTimeout
	// (default 5 minutes).
	Wait        bool
	WaitTimeout time.Duration
	// DeleteTimeout bounds the wait for legacy objects to disappear; default 2 minutes.
	DeleteTimeout time.Duration
	// PollInterval is how often waits poll; default 1 second.
	PollInterval time.Duration
	// Prune deletes what an earlier start deployed of the components the configuration switches
	// off: storage.driver "none" (workloads, RBAC, webhooks, and the default VolumeSnapshotClass
	// when the applier created it and no VolumeSnapshot uses it; never CRDs, PVs, PVCs,
	// LogicalVolumes, StorageClasses, the namespace or the LVMCluster) and optionalCsiComponents
	// without the snapshot controller (its workload, identity and RBAC; never the snapshot CRDs
	// or snapshots). Only objects the applier can prove it applied are deleted (Result.Foreign
	// lists the others). Without Prune the leftovers are only reported in Result.Remaining. Prune
	// with no component switched off is an error.
	Prune bool
	// ForcePrune lets Prune remove the storage driver although PersistentVolumes or
	// VolumeSnapshotContents of topolvm.io still exist; without it such a prune is refused (the
	// storage component fails, listing them) and deletes nothing.
	ForcePrune bool
}

// ObjectRef names one API object (declared in package eras, which the rebase shares).
type ObjectRef = eras.ObjectRef

// Skip is an object that was not applied and why.
type Skip struct {
	Object ObjectRef
	Reason string
}

// Component names in Result.Components and ComponentError.
const (
	StorageComponent  = "storage"
	SnapshotComponent = "csi-snapshot-controller"
)

// ComponentResult is the outcome of one component. A failed component does not stop the other.
type ComponentResult struct {
	Name string
	// Enabled is whether the configuration asked for the component.
	Enabled bool
	// Err is why the component failed; nil when it was applied (or is disabled).
	Err error
}

// ComponentError is one component's failure as returned by Apply (joined when both fail).
// errors.As on Apply's error finds it, and through it the cause, such as an *LvmdError.
type ComponentError struct {
	Component string
	Err       error
}

func (e *ComponentError) Error() string { return e.Component + ": " + e.Err.Error() }
func (e *ComponentError) Unwrap() error { return e.Err }

// Result reports what Apply did, each list in apply order.
type Result struct {
	// Era is the storage era the assets belong to.
	Era Era
	// Version is the LVMS version the assets ship (kube-public/lvms-version), when they do.
	Version string
	// Components has one entry per component, storage first.
	Components []ComponentResult
	// Remaining are objects of a switched-off component (storage.driver "none", or no snapshot
	// controller) that MicroShift deployed and that are still on the cluster when Apply returns:
	// without Options.Prune every one found, with it those the prune left (Kept says why).
	Remaining []ObjectRef
	// Foreign are objects the applier would have deleted (the other era's, or a switched-off
	// component's) but cannot prove MicroShift's (NotOwnedReason): they are left alone.
	Foreign []ObjectRef
	// Kept lists every object Apply would have deleted and left on the cluster, with why: not
	// proven MicroShift's (the Foreign ones, with the proof that failed: OLM's labels or owner,
	// no server-side apply by FieldManager, content changed since, …), in use, a prune refused,
	// or replaced meanwhile.
	Kept []Skip
	// Plan is the outcome of the configuration gates.
	Plan Plan
	// Lvmd is where the lvmd configuration came from. LvmdChecksum is the SHA-256 of the deployed
	// form: the rendered ConfigMap data (TopoLVM era, the pod-template annotation) or the runtime
	// copy (LVMS era).
	Lvmd         LvmdSource
	LvmdChecksum string
	// RuntimeLvmdWritten is true when the LVMS runtime copy was (re)written.
	RuntimeLvmdWritten bool
	Created            []ObjectRef
	Updated            []ObjectRef
	Deleted            []ObjectRef
	Unchanged          []ObjectRef
	Skipped            []Skip
	// Warnings are non-fatal conditions, also logged.
	Warnings []string
}

// applyLock serialises Apply calls in one process: MicroShift's helpers share one lock too, and
// two interleaved runs would race on the runtime lvmd copy and the legacy deletions. It is a
// channel so that waiting for it ends with the caller's context (MicroShift's shutdown).
var applyLock = make(chan struct{}, 1)

// Apply renders the assets and applies them. Configuration is validated and every template is
// rendered before the API is contacted; an unreachable API server is retried with backoff until ctx
// ends.
func Apply(ctx context.Context, opts Options) (*Result, error) {
	o, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	select {
	case applyLock <- struct{}{}:
		defer func() { <-applyLock }()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for another Apply of this process to finish: %w", context.Cause(ctx))
	}

	pl, err := prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	res := pl.result
	for _, w := range res.Warnings {
		o.Logger.Warn(w)
	}
	if pl.storageErr != nil {
		o.Logger.Error("storage driver not deployed", "error", pl.storageErr)
	}
	if pl.era.runtimeLvmdCopy && res.Plan.Storage {
		changed, err := atomicfile.WriteFile(o.RuntimeLvmdPath, pl.runtimeLvmd, pl.runtimeMode)
		if err != nil {
			pl.failStorage(fmt.Errorf("writing runtime lvmd copy: %w", err))
		}
		res.RuntimeLvmdWritten = changed
	}
	comps := pl.components()
	if len(pl.objects) == 0 && len(pl.deletes) == 0 && len(pl.pruneStorage)+len(pl.pruneSnapshot) == 0 && !pl.preflightFailed {
		o.Logger.Info("no storage objects to apply")
		return res, res.finish(comps)
	}
	k, err := kube.Connect(ctx, kubeOptions(o))
	if err != nil {
		// Every component that was still going fails with the connection; an lvmd error found
		// before stays its component's error.
		for _, c := range comps {
			if c.Err == nil && c.Enabled {
				c.Err = err
			}
		}
		if joined := res.finish(comps); joined != nil {
			return res, joined
		}
		return res, err
	}
	applyPlan(ctx, k, pl, comps)
	return res, res.finish(comps)
}

// components lists the two components' gates and prepare-time failures.
func (pl *preparation) components() []*ComponentResult {
	p := pl.result.Plan
	return []*ComponentResult{
		{Name: StorageComponent, Enabled: p.Storage || pl.storageErr != nil, Err: pl.storageErr},
		{Name: SnapshotComponent, Enabled: p.SnapshotController || p.SnapshotWebhook},
	}
}

// finish records the component results and returns their failures joined, nil when none failed.
func (r *Result) finish(comps []*ComponentResult) error {
	var errs []error
	for _, c := range comps {
		r.Components = append(r.Components, *c)
		if c.Err != nil {
			errs = append(errs, &ComponentError{Component: c.Name, Err: c.Err})
		}
	}
	return errors.Join(errs...)
}

// hostDefaults fills the node-side settings Options and WatchOptions share: MicroShift's lvmd
// paths, the vgs-based volume group lister and the default logger.
func hostDefaults(lvmd, runtimeLvmd *string, vgs *VolumeGroupLister, logger **slog.Logger) {
	if *lvmd == "" {
		*lvmd = DefaultLvmdPath
	}
	if *runtimeLvmd == "" {
		*runtimeLvmd = DefaultRuntimeLvmdPath
	}
	if *vgs == nil {
		*vgs = VGSLister{}
	}
	if *logger == nil {
		*logger = slog.Default()
	}
}

func withDefaults(o Options) (Options, error) {
	if o.Assets == nil {
		return o, errors.New("applier options: Assets is required")
	}
	if o.RESTConfig == nil {
		return o, errors.New("applier options: RESTConfig is required")
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
		if a, ok := eras.LookupArch(runtime.GOARCH); ok {
			o.Arch = a.MicroShift
		}
	}
	hostDefaults(&o.LvmdPath, &o.RuntimeLvmdPath, &o.VolumeGroups, &o.Logger)
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = 5 * time.Minute
	}
	if o.DeleteTimeout <= 0 {
		o.DeleteTimeout = 2 * time.Minute
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	return o, nil
}

// preparation is everything decided before the API is contacted, built by the steps of
// prepare; applyPlan acts on it.
type preparation struct {
	o      Options
	era    *eraSpec
	result *Result
	// files and shipped are the unrendered assets and the objects they declare.
	files   []assets.File
	shipped []ObjectRef
	// lvmdStr is the lvmd configuration templates receive (the TopoLVM ConfigMap's rendered
	// form, or the runtime copy); socketName is its lvmd socket.
	lvmdStr, socketName string
	images              map[string]string
	// runtimeLvmd is the LVMS runtime copy: the user's file as written, or the generated defaults.
	runtimeLvmd   []byte
	runtimeMode   os.FileMode
	lvmdCanonical []byte
	objects       []assets.Object // rendered and gated, in apply order, CRDs first
	deletes       []ObjectRef     // legacy objects to remove
	ready         []ObjectRef
	// storageErr fails the storage component before the API is contacted (bad lvmd config, or
	// one the host cannot serve: preflightFailed).
	storageErr      error
	preflightFailed bool
	// pruneStorage and pruneSnapshot are the objects of a switched-off component (driver "none",
	// no snapshot controller) that are reported, or deleted with Prune.
	pruneStorage, pruneSnapshot []ObjectRef
	// thinClass is the first thin device class, if any: TopoLVM snapshots only thin volumes,
	// so a thin class gets a default VolumeSnapshotClass.
	thinClass string
}

// prepareStep is one named step of prepare; the name is what the debug log reports.
type prepareStep struct {
	name string
	run  func(context.Context) error
}

// prepare runs the preparation steps in order: read the assets, identify their era, decide the
// gates, read the lvmd configuration, resolve the images, render the templates, schedule the
// deletions and waits. The first failing step fails Apply before anything is applied; an invalid
// lvmd configuration is not a failure here but the storage component's (storageErr).
func prepare(ctx context.Context, o Options) (*preparation, error) {
	pl := &preparation{o: o, result: &Result{}}
	for _, st := range []prepareStep{
		{"assets", pl.readAssets},
		{"era", pl.identifyEra},
		{"gates", pl.gates},
		{"lvmd", pl.lvmd},
		{"images", pl.resolveImages},
		{"render", pl.renderAssets},
		{"schedule", pl.schedule},
	} {
		if err := st.run(ctx); err != nil {
			return nil, err
		}
		o.Logger.Debug("prepared", "step", st.name)
	}
	return pl, nil
}

// readAssets reads the YAML files of both components and the objects they declare.
func (pl *preparation) readAssets(context.Context) error {
	var err error
	if pl.files, err = assets.Read(pl.o.Assets); err != nil {
		return err
	}
	pl.shipped, err = assets.Peek(pl.files)
	return err
}

// identifyEra selects the era from the marker objects the assets ship.
func (pl *preparation) identifyEra(context.Context) error {
	era, err := identify(pl.shipped)
	if err != nil {
		return err
	}
	pl.era = era
	pl.result.Era, pl.result.Version = era.era, assetsVersion(pl.files)
	return nil
}

// gates decides the components from the storage configuration and what the assets ship.
func (pl *preparation) gates(context.Context) error {
	o := pl.o
	_, lvmdErr := os.Stat(o.LvmdPath)
	gates, err := decideGates(gateInput{
		Config:          o.Storage,
		LvmdFilePresent: lvmdErr == nil,
		WebhookShipped:  slices.ContainsFunc(pl.shipped, snapshotWebhookObjects[0].SameObject),
	})
	if err != nil {
		return err
	}
	res := pl.result
	res.Plan = gates
	res.Warnings = append(res.Warnings, gates.Warnings...)
	if o.Prune && o.Storage.Driver != DriverNone && res.Plan.SnapshotController {
		return fmt.Errorf("applier options: Prune removes switched-off components, but none is: storage.driver is %q (not %q) and optionalCsiComponents include the snapshot controller", o.Storage.Driver, DriverNone)
	}
	return nil
}

// lvmd reads the lvmd configuration (see prepareLvmd); its failures are the storage
// component's, never prepare's.
func (pl *preparation) lvmd(ctx context.Context) error {
	pl.lvmdStr, pl.socketName = pl.prepareLvmd(ctx, pl.o)
	return nil
}

// resolveImages takes Options.Images, or the arch's release JSON from the assets.
func (pl *preparation) resolveImages(context.Context) error {
	if pl.images = pl.o.Images; pl.images != nil {
		return nil
	}
	rel, err := fs.Sub(pl.o.Assets, releasefile.Dir)
	if err != nil {
		return fmt.Errorf("release images: %w", err)
	}
	f, err := releasefile.Read(rel, pl.o.Arch)
	if err == nil {
		pl.images, err = f.TemplateImages()
		if err != nil {
			err = fmt.Errorf("%s: %w", releasefile.FileName(pl.o.Arch), err)
		}
	}
	if err != nil {
		return fmt.Errorf("assets %s/: %w", releasefile.Dir, err)
	}
	return nil
}

// renderAssets executes the gated templates with the images and lvmd configuration.
func (pl *preparation) renderAssets(context.Context) error {
	params := map[string]any{releasefile.TemplateField: pl.images, "lvmd": pl.lvmdStr, "SocketName": pl.socketName}
	return pl.render(pl.files, params, pl.lvmdStr)
}

// schedule fills in the declared deletions, readiness waits and prune candidates.
func (pl *preparation) schedule(context.Context) error {
	var storageFiles, snapshotFiles []assets.File
	for _, f := range pl.files {
		if f.Comp == assets.Storage {
			storageFiles = append(storageFiles, f)
		} else {
			snapshotFiles = append(snapshotFiles, f)
		}
	}
	storageRefs, _ := assets.Peek(storageFiles) // decoded without error by readAssets
	snapshotRefs, _ := assets.Peek(snapshotFiles)
	p := pl.result.Plan
	if p.Storage {
		pl.deletes = append(pl.deletes, pl.era.legacy...)
	}
	if p.SnapshotController && !p.SnapshotWebhook {
		pl.deletes = append(pl.deletes, snapshotWebhookObjects...)
	}
	pl.ready = ReadyWorkloads(pl.era.era, p)
	if pl.o.Storage.Driver == DriverNone {
		extra := append(slices.Clone(pl.era.created), pl.era.legacy...)
		pl.pruneStorage = append(pruneCandidates(storageRefs, extra), kube.DefaultSnapshotClassRef)
	}
	if !p.SnapshotController {
		var controller []ObjectRef
		for _, r := range snapshotRefs {
			if !slices.ContainsFunc(snapshotWebhookObjects, r.SameObject) {
				controller = append(controller, r)
			}
		}
		if !p.SnapshotWebhook {
			controller = append(controller, snapshotWebhookObjects...)
		}
		pl.pruneSnapshot = pruneCandidates(controller, nil)
	}
	return nil
}

// prepareLvmd reads the lvmd configuration when storage is wanted, and decides the storage gate's
// remaining conditions: LVM on the host and at least one device class. An invalid lvmd file is
// read and reported even without LVM, and fails only the storage component.
func (pl *preparation) prepareLvmd(ctx context.Context, o Options) (lvmdStr, socketName string) {
	res := pl.result
	socketName = defaultSocketName
	if !res.Plan.Storage {
		return "", socketName
	}
	userCfg, userData, err := readUserLvmd(o.LvmdPath)
	if err != nil {
		return pl.failStorage(err), socketName
	}
	// LVM on the host is a gate of its own, as in MicroShift: without it nothing storage-related
	// is deployed, even when an lvmd file exists.
	vgs, err := o.VolumeGroups.VolumeGroups(ctx)
	if errors.Is(err, ErrNoLVM) {
		res.Plan.Storage = false
		res.Warnings = append(res.Warnings, "LVM is not installed; storage is not deployed: "+err.Error())
		return "", socketName
	} else if err != nil {
		return pl.failStorage(fmt.Errorf("listing volume groups: %w", err)), socketName
	}
	if userCfg != nil {
		if err := pl.preflight(ctx, userCfg, vgs); err != nil {
			return pl.failStorage(err), socketName
		}
	}
	cfg, src := userCfg, LvmdSource{Path: o.LvmdPath, Message: "Read from " + o.LvmdPath}
	if cfg == nil {
		var msg string
		cfg, msg = defaultLvmd(vgs)
		src = LvmdSource{Message: msg}
	}
	res.Lvmd = src
	o.Logger.Info("lvmd config", "source", src.Message)
	if !cfg.Enabled() {
		res.Plan.Storage = false
		res.Warnings = append(res.Warnings, "lvmd config has no device classes ("+src.Message+"); storage is not deployed")
		return "", socketName
	}
	lvmdStr, err = pl.useLvmd(cfg, src, userData)
	if err != nil {
		return pl.failStorage(err), cfg.SocketName
	}
	res.LvmdChecksum = assets.Sha256sum(lvmdStr)
	return lvmdStr, cfg.SocketName
}

// readUserLvmd parses the user's lvmd file; both results are nil when it does not exist.
func readUserLvmd(path string) (*LvmdConfig, []byte, error) {
	data, err := ReadLvmdFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, readLvmdError(path, err)
	}
	cfg, err := parseLvmdConfig(path, data)
	if err != nil {
		return nil, nil, err
	}
	return cfg, data, nil
}

// useLvmd records the deployed forms of cfg (canonical, runtime copy, thin class) and returns
// the form templates receive: the runtime copy, or the TopoLVM ConfigMap's rendered form.
func (pl *preparation) useLvmd(cfg *LvmdConfig, src LvmdSource, userData []byte) (string, error) {
	canon, err := cfg.Canonical()
	if err != nil {
		return "", err
	}
	pl.lvmdCanonical = canon
	// The runtime copy keeps what the user wrote, comments included; MicroShift copies a user
	// file world-readable but writes generated defaults 0600.
	pl.runtimeLvmd, pl.runtimeMode = userData, 0o644
	if userData == nil {
		pl.runtimeLvmd, pl.runtimeMode = canon, 0o600
	}
	if i := slices.IndexFunc(cfg.DeviceClasses, func(dc *DeviceClass) bool { return dc.Type == TypeThin }); i >= 0 {
		pl.thinClass = cfg.DeviceClasses[i].Name
	}
	if pl.era.lvmdConfigMap == nil {
		return string(pl.runtimeLvmd), nil
	}
	rendered, err := cfg.Rendered(src.Message)
	if err != nil {
		return "", err
	}
	return string(rendered), nil
}

// failStorage records a storage-only failure and turns the storage gate off for this run.
func (pl *preparation) failStorage(err error) string {
	pl.storageErr = err
	pl.result.Plan.Storage = false
	return ""
}

// render executes the templates of the gated components and decodes their objects.
func (pl *preparation) render(files []assets.File, params map[string]any, lvmdStr string) error {
	p := pl.result.Plan
	for _, f := range files {
		if f.Comp == assets.Storage && !p.Storage {
			continue
		}
		if f.Comp == assets.Snapshot && !p.SnapshotController && !p.SnapshotWebhook {
			continue
		}
		out, err := assets.Render(f.Path, f.Data, params)
		if err != nil {
			return err
		}
		docs, err := assets.DecodeDocs(f.Path, out)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if err := pl.add(f, d, lvmdStr); err != nil {
				return err
			}
		}
	}
	slices.SortStableFunc(pl.objects, func(a, b assets.Object) int {
		return assets.KindRank(a.Obj.GetKind()) - assets.KindRank(b.Obj.GetKind())
	})
	return nil
}

// add gates, sanitises and records one rendered object.
func (pl *preparation) add(f assets.File, d *unstructured.Unstructured, lvmdStr string) error {
	p := pl.result.Plan
	ob := assets.Object{File: f.Path, Comp: f.Comp, Obj: d}
	if f.Comp == assets.Snapshot && d.GetKind() != "CustomResourceDefinition" {
		ob.Comp = assets.SnapshotController
		if slices.ContainsFunc(snapshotWebhookObjects, ob.Ref().SameObject) {
			ob.Comp = assets.SnapshotWebhook
		}
	}
	if ob.Comp == assets.SnapshotController && !p.SnapshotController || ob.Comp == assets.SnapshotWebhook && !p.SnapshotWebhook {
		return nil
	}
	if assets.KindRank(d.GetKind()) < 0 {
		return fmt.Errorf("asset %s: kind %s (%s) has no place in the declared apply order", f.Path, d.GetKind(), d.GetName())
	}
	var err error
	if ob.Obj, err = assets.Sanitize(d); err != nil {
		return fmt.Errorf("asset %s: %w", f.Path, err)
	}
	if cm := pl.era; cm.lvmdConfigMap != nil && ob.Ref().SameObject(*cm.lvmdConfigMap) {
		// The shipped ConfigMap is a placeholder: its data is replaced, not merged.
		ob.Obj.Object["data"] = map[string]any{cm.lvmdKey: lvmdStr}
	}
	if i := slices.IndexFunc(pl.objects, func(x assets.Object) bool { return x.Ref().SameObject(ob.Ref()) }); i >= 0 {
		return fmt.Errorf("assets %s and %s both define %s", pl.objects[i].File, f.Path, ob.Ref())
	}
	pl.objects = append(pl.objects, ob)
	return nil
}

// refs lists the planned objects in apply order.
func (p *preparation) refs() []ObjectRef {
	var out []ObjectRef
	for _, o := range p.objects {
		out = append(out, o.Ref())
	}
	return out
}

// InTheWayError is a Deployment or DaemonSet of a name MicroShift applies that is someone else's
// (OLM's marks, or neither the applier's nor MicroShift's own field manager): its component fails
// naming it, its writers and what to do, and it is neither changed nor deleted.
type InTheWayError = kube.InTheWayError

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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// Defaults for Options fields left empty.
const (
	DefaultLvmdPath        = "/etc/microshift/lvmd.yaml"
	DefaultRuntimeLvmdPath = "/var/lib/microshift/lvms/lvmd.yaml"
	// FieldManager owns every field the applier sets, so repeated applies never conflict with
	// themselves and kubectl shows who set what.
	FieldManager = "microshift-storage"
	// AppliedHashAnnotation records a hash of the applied object, so that fields removed from the
	// assets are noticed even though the live object still contains everything that was sent.
	AppliedHashAnnotation = "lvms.microshift.io/applied-hash"
	// LvmdChecksumAnnotation is the pod-template annotation the TopoLVM node DaemonSet template sets.
	LvmdChecksumAnnotation = "lvms.microshift.io/lvmd_config_sha256sum"
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
	// Prune, with storage.driver "none", deletes the storage objects a previous start deployed
	// (workloads, RBAC, webhooks; never CRDs, volumes, claims, StorageClasses or the LVMCluster).
	// Without it they are only reported in Result.Remaining.
	Prune bool
}

// ObjectRef names one API object.
type ObjectRef struct {
	Group, Version, Kind string
	Namespace, Name      string
}

// String formats the reference as `Kind.group namespace/name`, the form used in logs and errors.
func (r ObjectRef) String() string {
	gk := r.Kind
	if r.Group != "" {
		gk += "." + r.Group
	}
	if r.Namespace != "" {
		return gk + " " + r.Namespace + "/" + r.Name
	}
	return gk + " " + r.Name
}

func (r ObjectRef) sameObject(o ObjectRef) bool {
	return r.Group == o.Group && r.Kind == o.Kind && r.Namespace == o.Namespace && r.Name == o.Name
}

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
	// Remaining are storage objects still on the cluster although storage.driver is "none"
	// (Options.Prune deletes them instead).
	Remaining []ObjectRef
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

// applyMu serialises Apply calls in one process: MicroShift's helpers share one lock too, and two
// interleaved runs would race on the runtime lvmd copy and the legacy deletions.
var applyMu sync.Mutex

// Apply renders the assets and applies them. Configuration is validated and every template is
// rendered before the API is contacted; an unreachable API server is retried with backoff until ctx
// ends.
func Apply(ctx context.Context, opts Options) (*Result, error) {
	o, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	applyMu.Lock()
	defer applyMu.Unlock()

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
		changed, err := WriteFileAtomic(o.RuntimeLvmdPath, pl.runtimeLvmd, pl.runtimeMode)
		if err != nil {
			pl.failStorage(fmt.Errorf("writing runtime lvmd copy: %w", err))
		}
		res.RuntimeLvmdWritten = changed
	}
	comps := pl.components()
	if len(pl.objects) == 0 && len(pl.deletes) == 0 && len(pl.pruneCandidates) == 0 {
		o.Logger.Info("no storage objects to apply")
		return res, res.finish(comps)
	}
	k, err := connect(ctx, o)
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
	k.run(ctx, pl, res, comps)
	return res, res.finish(comps)
}

// components lists the two components' gates and prepare-time failures.
func (pl *plan) components() []*ComponentResult {
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

func withDefaults(o Options) (Options, error) {
	if o.Assets == nil {
		return o, errors.New("applier options: Assets is required")
	}
	if o.RESTConfig == nil {
		return o, errors.New("applier options: RESTConfig is required")
	}
	if o.Arch == "" {
		o.Arch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
		if o.Arch == "" {
			o.Arch = runtime.GOARCH
		}
	}
	if o.LvmdPath == "" {
		o.LvmdPath = DefaultLvmdPath
	}
	if o.RuntimeLvmdPath == "" {
		o.RuntimeLvmdPath = DefaultRuntimeLvmdPath
	}
	if o.VolumeGroups == nil {
		o.VolumeGroups = VGSLister{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
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

// plan is everything decided before the API is contacted.
type plan struct {
	era    *eraSpec
	result *Result
	// runtimeLvmd is the LVMS runtime copy: the user's file as written, or the generated defaults.
	runtimeLvmd   []byte
	runtimeMode   os.FileMode
	lvmdCanonical []byte
	objects       []object    // rendered and gated, in apply order, CRDs first
	deletes       []ObjectRef // legacy objects to remove
	ready         []ObjectRef
	// storageErr fails the storage component before the API is contacted (bad lvmd config).
	storageErr error
	// pruneCandidates are the storage objects driver "none" reports and Prune deletes.
	pruneCandidates []ObjectRef
	// thinDefault is the default device class when it is thin: it gets a default
	// VolumeSnapshotClass.
	thinDefault string
}

func prepare(ctx context.Context, o Options) (*plan, error) {
	files, err := readAssets(o.Assets)
	if err != nil {
		return nil, err
	}
	shipped, err := peek(files)
	if err != nil {
		return nil, err
	}
	era, err := identify(shipped)
	if err != nil {
		return nil, err
	}
	pl := &plan{era: era, result: &Result{Era: era.era, Version: assetsVersion(files)}}
	_, lvmdErr := os.Stat(o.LvmdPath)
	gates, err := Gates(GateInput{
		Config:          o.Storage,
		LvmdFilePresent: lvmdErr == nil,
		WebhookShipped:  slices.ContainsFunc(shipped, SnapshotWebhookObjects[0].sameObject),
	})
	if err != nil {
		return nil, err
	}
	res := pl.result
	res.Plan = gates
	res.Warnings = append(res.Warnings, gates.Warnings...)
	if o.Prune && res.Plan.Storage {
		return nil, fmt.Errorf("applier options: Prune removes the storage driver and requires storage.driver %q, got %q", DriverNone, o.Storage.Driver)
	}

	lvmdStr, socketName := pl.prepareLvmd(ctx, o)
	images := o.Images
	if images == nil {
		rel, err := fs.Sub(o.Assets, ReleaseDir)
		if err != nil {
			return nil, fmt.Errorf("release images: %w", err)
		}
		if images, err = ReleaseImages(rel, o.Arch); err != nil {
			return nil, fmt.Errorf("assets %s/: %w", ReleaseDir, err)
		}
	}
	params := map[string]any{"ReleaseImage": images, "lvmd": lvmdStr, "SocketName": socketName}
	if err := pl.render(files, params, lvmdStr); err != nil {
		return nil, err
	}
	var storageFiles []rawFile
	for _, f := range files {
		if f.comp == compStorage {
			storageFiles = append(storageFiles, f)
		}
	}
	storageRefs, _ := peek(storageFiles) // decoded without error above
	pl.plan(o, storageRefs)
	return pl, nil
}

// prepareLvmd reads the lvmd configuration when storage is wanted, and decides the storage gate's
// remaining conditions: LVM on the host and at least one device class. An invalid lvmd file is
// read and reported even without LVM, and fails only the storage component.
func (pl *plan) prepareLvmd(ctx context.Context, o Options) (lvmdStr, socketName string) {
	res := pl.result
	socketName = DefaultSocketName
	if !res.Plan.Storage {
		return "", socketName
	}
	var userCfg *LvmdConfig
	var userData []byte
	if data, err := os.ReadFile(o.LvmdPath); err == nil {
		if userCfg, err = ParseLvmd(o.LvmdPath, data); err != nil {
			return pl.failStorage(err), socketName
		}
		userData = data
	} else if !errors.Is(err, fs.ErrNotExist) {
		return pl.failStorage(fmt.Errorf("reading lvmd config %s: %w", o.LvmdPath, err)), socketName
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
	cfg, src := userCfg, LvmdSource{Path: o.LvmdPath, Message: "Read from " + o.LvmdPath}
	if cfg == nil {
		var msg string
		cfg, msg = DefaultLvmd(vgs)
		src = LvmdSource{Message: msg}
	}
	res.Lvmd = src
	o.Logger.Info("lvmd config", "source", src.Message)
	if !cfg.Enabled() {
		res.Plan.Storage = false
		res.Warnings = append(res.Warnings, "lvmd config has no device classes ("+src.Message+"); storage is not deployed")
		return "", socketName
	}
	canon, err := cfg.Canonical()
	if err != nil {
		return pl.failStorage(err), socketName
	}
	pl.lvmdCanonical = canon
	// The runtime copy keeps what the user wrote, comments included; MicroShift copies a user
	// file world-readable but writes generated defaults 0600.
	pl.runtimeLvmd, pl.runtimeMode = userData, 0o644
	if userData == nil {
		pl.runtimeLvmd, pl.runtimeMode = canon, 0o600
	}
	if dc := cfg.DefaultDeviceClass(); dc != nil && dc.Type == TypeThin {
		pl.thinDefault = dc.Name
	}
	lvmdStr, socketName = string(pl.runtimeLvmd), cfg.SocketName
	if pl.era.lvmdConfigMap != nil {
		rendered, err := cfg.Rendered(src.Message)
		if err != nil {
			return pl.failStorage(err), socketName
		}
		lvmdStr = string(rendered)
	}
	res.LvmdChecksum = Sha256sum(lvmdStr)
	return lvmdStr, socketName
}

// failStorage records a storage-only failure and turns the storage gate off for this run.
func (pl *plan) failStorage(err error) string {
	pl.storageErr = err
	pl.result.Plan.Storage = false
	return ""
}

// render executes the templates of the gated components and decodes their objects.
func (pl *plan) render(files []rawFile, params map[string]any, lvmdStr string) error {
	p := pl.result.Plan
	for _, f := range files {
		if f.comp == compStorage && !p.Storage {
			continue
		}
		if f.comp == compSnapshot && !p.SnapshotController && !p.SnapshotWebhook {
			continue
		}
		out, err := render(f.path, f.data, params)
		if err != nil {
			return err
		}
		docs, err := decodeDocs(f.path, out)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if err := pl.add(f, d, lvmdStr); err != nil {
				return err
			}
		}
	}
	slices.SortStableFunc(pl.objects, func(a, b object) int { return kindRank(a.obj.GetKind()) - kindRank(b.obj.GetKind()) })
	return nil
}

// add gates, sanitises and records one rendered object.
func (pl *plan) add(f rawFile, d *unstructured.Unstructured, lvmdStr string) error {
	p := pl.result.Plan
	ob := object{file: f.path, comp: f.comp, obj: d}
	if f.comp == compSnapshot && d.GetKind() != "CustomResourceDefinition" {
		ob.comp = compSnapshotController
		if slices.ContainsFunc(SnapshotWebhookObjects, ob.ref().sameObject) {
			ob.comp = compSnapshotWebhook
		}
	}
	if ob.comp == compSnapshotController && !p.SnapshotController || ob.comp == compSnapshotWebhook && !p.SnapshotWebhook {
		return nil
	}
	if kindRank(d.GetKind()) < 0 {
		return fmt.Errorf("asset %s: kind %s (%s) has no place in the declared apply order", f.path, d.GetKind(), d.GetName())
	}
	var err error
	if ob.obj, err = sanitize(d); err != nil {
		return fmt.Errorf("asset %s: %w", f.path, err)
	}
	if cm := pl.era; cm.lvmdConfigMap != nil && ob.ref().sameObject(*cm.lvmdConfigMap) {
		// The shipped ConfigMap is a placeholder: its data is replaced, not merged.
		ob.obj.Object["data"] = map[string]any{cm.lvmdKey: lvmdStr}
	}
	if i := slices.IndexFunc(pl.objects, func(x object) bool { return x.ref().sameObject(ob.ref()) }); i >= 0 {
		return fmt.Errorf("assets %s and %s both define %s", pl.objects[i].file, f.path, ob.ref())
	}
	pl.objects = append(pl.objects, ob)
	return nil
}

// plan fills in the declared deletions, readiness waits and prune candidates.
func (pl *plan) plan(o Options, storageRefs []ObjectRef) {
	p := pl.result.Plan
	if p.Storage {
		pl.deletes = append(pl.deletes, pl.era.legacy...)
		pl.ready = append(pl.ready, pl.era.ready...)
	}
	if p.SnapshotController || p.SnapshotWebhook {
		if !p.SnapshotWebhook {
			pl.deletes = append(pl.deletes, SnapshotWebhookObjects...)
		} else {
			pl.ready = append(pl.ready, snapshotWebhookReady)
		}
		if p.SnapshotController {
			pl.ready = append(pl.ready, snapshotControllerReady)
		}
	}
	if o.Storage.Driver == DriverNone {
		pl.pruneCandidates = pruneCandidates(pl.era, storageRefs)
	}
}

// refs lists the planned objects in apply order.
func (p *plan) refs() []ObjectRef {
	var out []ObjectRef
	for _, o := range p.objects {
		out = append(out, o.ref())
	}
	return out
}

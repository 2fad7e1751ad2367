// Package applier is the runtime library MicroShift embeds to deploy storage: it renders the LVMS
// (or, before 4.17, TopoLVM) and CSI snapshot assets written by lvms-rebase and applies them to
// the API server.
//
// Apply is strict about configuration and checks all of it before touching the API, so a bad
// lvmd.yaml or storage section applies nothing. It is idempotent: objects are compared with the
// live state first and server-side applied only when they differ, so an unchanged restart sends no
// mutating request. Era differences (lvmd ConfigMap and pod-template checksum vs. the runtime
// lvmd copy, the 4.17 TopoLVM clean-up) are declared data selected by the assets themselves.
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

// Result reports what Apply did, each list in apply order.
type Result struct {
	// Era is the storage era the assets belong to ("" for snapshot-only assets).
	Era Era
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
	if pl.era != nil && pl.era.runtimeLvmdCopy && res.Plan.Storage {
		// MicroShift copies a user file world-readable but writes generated defaults 0600.
		mode := os.FileMode(0o644)
		if res.Lvmd.Path == "" {
			mode = 0o600
		}
		changed, err := WriteFileAtomic(o.RuntimeLvmdPath, pl.lvmdCanonical, mode)
		if err != nil {
			return res, fmt.Errorf("writing runtime lvmd copy: %w", err)
		}
		res.RuntimeLvmdWritten = changed
	}
	if len(pl.objects) == 0 && len(pl.deletes) == 0 {
		o.Logger.Info("no storage objects to apply")
		return res, nil
	}
	k, err := connect(ctx, o)
	if err != nil {
		return res, err
	}
	if err := k.run(ctx, pl, res); err != nil {
		return res, err
	}
	if o.Wait {
		if err := k.waitReady(ctx, pl.ready); err != nil {
			return res, err
		}
	}
	return res, nil
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
	era           *eraSpec
	result        *Result
	lvmdCanonical []byte
	objects       []object    // rendered and gated, in apply order, CRDs first
	deletes       []ObjectRef // legacy objects to remove
	ready         []ObjectRef
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
	pl := &plan{era: detectEra(shipped), result: &Result{}}
	if pl.era != nil {
		pl.result.Era = pl.era.era
	}
	_, lvmdErr := os.Stat(o.LvmdPath)
	gates, err := Gates(GateInput{
		Config:          o.Storage,
		LvmdFilePresent: lvmdErr == nil,
		WebhookShipped:  slices.ContainsFunc(shipped, snapshotWebhookObjects[0].sameObject),
	})
	if err != nil {
		return nil, err
	}
	res := pl.result
	res.Plan = gates
	res.Warnings = append(res.Warnings, gates.Warnings...)
	if pl.era == nil {
		res.Plan.Storage = false
	}

	lvmdStr, socketName := "", DefaultSocketName
	var vgs []string
	if res.Plan.Storage {
		// LVM on the host is a gate of its own, as in MicroShift: without it nothing storage-related
		// is deployed, even when an lvmd file exists.
		vgs, err = o.VolumeGroups.VolumeGroups(ctx)
		if errors.Is(err, ErrNoLVM) {
			res.Plan.Storage = false
			res.Warnings = append(res.Warnings, "LVM is not installed; storage is not deployed: "+err.Error())
		} else if err != nil {
			return nil, fmt.Errorf("listing volume groups: %w", err)
		}
	}
	if res.Plan.Storage {
		cfg, src, err := LoadLvmd(ctx, o.LvmdPath, StaticVolumeGroups(vgs))
		if err != nil {
			return nil, err
		} else {
			res.Lvmd = src
			o.Logger.Info("lvmd config", "source", src.Message)
			if !cfg.Enabled() {
				res.Plan.Storage = false
				res.Warnings = append(res.Warnings, "lvmd config has no device classes ("+src.Message+"); storage is not deployed")
			} else {
				canon, err := cfg.Canonical()
				if err != nil {
					return nil, err
				}
				pl.lvmdCanonical = canon
				lvmdStr, socketName = string(canon), cfg.SocketName
				if pl.era.lvmdConfigMap != nil {
					rendered, err := cfg.Rendered(src.Message)
					if err != nil {
						return nil, err
					}
					lvmdStr = string(rendered)
				}
				res.LvmdChecksum = Sha256sum(lvmdStr)
			}
		}
	}

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

	for _, f := range files {
		if f.comp == compStorage && !res.Plan.Storage {
			continue
		}
		if f.comp == compSnapshot && !res.Plan.SnapshotController && !res.Plan.SnapshotWebhook {
			continue
		}
		out, err := render(f.path, f.data, params)
		if err != nil {
			return nil, err
		}
		docs, err := decodeDocs(f.path, out)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			ob := object{file: f.path, comp: f.comp, obj: d}
			if f.comp == compSnapshot && d.GetKind() != "CustomResourceDefinition" {
				ob.comp = compSnapshotController
				if slices.ContainsFunc(snapshotWebhookObjects, ob.ref().sameObject) {
					ob.comp = compSnapshotWebhook
				}
			}
			if ob.comp == compSnapshotController && !res.Plan.SnapshotController ||
				ob.comp == compSnapshotWebhook && !res.Plan.SnapshotWebhook {
				continue
			}
			if kindRank(d.GetKind()) < 0 {
				return nil, fmt.Errorf("asset %s: kind %s (%s) has no place in the declared apply order", f.path, d.GetKind(), d.GetName())
			}
			if ob.obj, err = sanitize(d); err != nil {
				return nil, fmt.Errorf("asset %s: %w", f.path, err)
			}
			if cm := pl.era; cm != nil && cm.lvmdConfigMap != nil && ob.ref().sameObject(*cm.lvmdConfigMap) {
				// The shipped ConfigMap is a placeholder: its data is replaced, not merged.
				ob.obj.Object["data"] = map[string]any{cm.lvmdKey: lvmdStr}
			}
			if i := slices.IndexFunc(pl.objects, func(x object) bool { return x.ref().sameObject(ob.ref()) }); i >= 0 {
				return nil, fmt.Errorf("assets %s and %s both define %s", pl.objects[i].file, f.path, ob.ref())
			}
			pl.objects = append(pl.objects, ob)
		}
	}
	slices.SortStableFunc(pl.objects, func(a, b object) int { return kindRank(a.obj.GetKind()) - kindRank(b.obj.GetKind()) })

	if res.Plan.Storage {
		pl.deletes = append(pl.deletes, pl.era.legacy...)
		pl.ready = append(pl.ready, pl.era.ready...)
	}
	if res.Plan.SnapshotController || res.Plan.SnapshotWebhook {
		if !res.Plan.SnapshotWebhook {
			pl.deletes = append(pl.deletes, snapshotWebhookObjects...)
		} else {
			pl.ready = append(pl.ready, snapshotWebhookReady)
		}
		if res.Plan.SnapshotController {
			pl.ready = append(pl.ready, snapshotControllerReady)
		}
	}
	return pl, nil
}

// refs lists the planned objects in apply order.
func (p *plan) refs() []ObjectRef {
	var out []ObjectRef
	for _, o := range p.objects {
		out = append(out, o.ref())
	}
	return out
}

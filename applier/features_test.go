package applier

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
)

var (
	snapshotControllerRef = deploymentRef("kube-system", "csi-snapshot-controller")
	lvmsOperatorRef       = deploymentRef(StorageNamespace, "lvms-operator")
	lvmClusterRef         = ObjectRef{Group: "lvm.topolvm.io", Version: "v1alpha1", Kind: "LVMCluster", Namespace: StorageNamespace, Name: "lvms"}
	defaultVSCRef         = ObjectRef{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass", Name: DefaultSnapshotClassName}
	vscGVR                = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshotclasses"}
)

// applyErr runs Apply against the test API server and returns its error too.
func (e *env) applyErr(o Options) (*Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o.RESTConfig = e.cfg
	return Apply(ctx, o)
}

// A bad lvmd.yaml fails the storage driver only: the snapshot controller is still applied, the
// result has one entry per component, and the error is typed and names the field.
func TestBadLvmdFailsStorageOnly(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	mustWriteFile(t, o.LvmdPath, []byte("device-classes:\n- name: a\n  volume-group: vg\n  default: true\n- name: b\n  volume-group: vg\n  spare-gb: -3\n"), 0o644)
	res, err := e.applyErr(o)
	var le *LvmdError
	var ce *ComponentError
	if !errors.As(err, &le) || le.Field != "device-classes[1].spare-gb" || !errors.As(err, &ce) || ce.Component != StorageComponent {
		t.Fatalf("Apply error = %v, want a storage ComponentError wrapping an *LvmdError for device-classes[1].spare-gb", err)
	}
	if res == nil || len(res.Components) != 2 || res.Components[0].Err == nil || res.Components[1].Err != nil || !res.Components[1].Enabled {
		t.Fatalf("components = %+v", res)
	}
	e.mustGet(snapshotControllerRef)
	if _, ok := e.get(lvmsOperatorRef); ok {
		t.Error("storage applied despite the bad lvmd.yaml")
	}
	if _, err := os.Stat(o.RuntimeLvmdPath); !os.IsNotExist(err) {
		t.Errorf("runtime lvmd copy written from a bad file: %v", err)
	}
}

// Assets that identify no era, or lack a component directory, delete nothing: the webhook objects
// a 4.17 start deployed survive a restart with such trees.
func TestUnidentifiedAssetsDeleteNothing(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.17")
	e.apply(o)
	for name, assets := range map[string]func(Options) Options{
		"storage dir missing":  func(o Options) Options { o.Assets = without(o.Assets, assets.StorageDir+"/"); return o },
		"snapshot dir missing": func(o Options) Options { o.Assets = without(o.Assets, assets.SnapshotDir+"/"); return o },
		"no storage era marker": func(o Options) Options {
			o.Assets = without(o.Assets, assets.StorageDir+"/lvms_default-lvmcluster.yaml")
			return o
		},
		"webhook gone but no snapshot controller": func(o Options) Options {
			o.Assets = without(without(o.Assets, assets.SnapshotDir+"/webhook"), assets.SnapshotDir+"/csi_controller_deployment.yaml")
			return o
		},
	} {
		t.Run(name, func(t *testing.T) {
			var c counter
			o := assets(testOptions(t, "4.17"))
			o.RESTConfig = c.wrap(e.cfg)
			if _, err := Apply(context.Background(), o); err == nil || !strings.Contains(err.Error(), "nothing applied or deleted") {
				t.Fatalf("Apply = %v, want an error saying nothing was applied or deleted", err)
			}
			if total, _ := c.snapshot(); total != 0 {
				t.Errorf("%d requests sent", total)
			}
			for _, r := range snapshotWebhookObjects {
				e.mustGet(r)
			}
		})
	}
}

const thinLvmd = "device-classes:\n- name: thin\n  volume-group: rhel\n  default: true\n  type: thin\n  thin-pool:\n    name: pool\n    overprovision-ratio: 10\n"

// A thin default device class gets a default VolumeSnapshotClass, once; a restart writes nothing;
// an administrator's default is neither overwritten nor joined by a second one.
func TestDefaultVolumeSnapshotClass(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	mustWriteFile(t, o.LvmdPath, []byte(thinLvmd), 0o644)
	res := e.apply(o)
	if !slices.ContainsFunc(res.Created, defaultVSCRef.SameObject) {
		t.Fatalf("created %v, want %s", refsNamed(res.Created), defaultVSCRef)
	}
	vsc := e.mustGet(defaultVSCRef)
	if vsc.Object["driver"] != "topolvm.io" || vsc.Object["deletionPolicy"] != "Delete" || vsc.GetAnnotations()[DefaultClassAnnotation] != "true" {
		t.Errorf("VolumeSnapshotClass = %v", vsc.Object)
	}
	e.assertNoop(o, res)

	// The administrator makes their own class the default: ours loses the annotation; a restart
	// must not restore it or create another.
	mine := kube.DefaultSnapshotClass()
	mine.SetName("admin-default")
	if _, err := e.dyn.Resource(vscGVR).Create(context.Background(), mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vsc.SetAnnotations(nil)
	if _, err := e.dyn.Resource(vscGVR).Update(context.Background(), vsc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.apply(o)
	if e.mustGet(defaultVSCRef).GetAnnotations()[DefaultClassAnnotation] == "true" {
		t.Error("the administrator's choice of default was overwritten")
	}

	// Thick default: no class is created.
	e2 := newEnv(t)
	o2 := testOptions(t, "4.18")
	e2.apply(o2)
	list, err := e2.dyn.Resource(vscGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("thick default: VolumeSnapshotClasses %v %v", list, err)
	}
}

// With an administrator's default class already present, none is created.
func TestDefaultVolumeSnapshotClassExisting(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	o.Storage.Driver = DriverNone
	e.apply(o) // snapshot CRDs only
	mine := kube.DefaultSnapshotClass()
	mine.SetName("admin-default")
	if _, err := e.dyn.Resource(vscGVR).Create(context.Background(), mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	o.Storage.Driver = DriverDefault
	mustWriteFile(t, o.LvmdPath, []byte(thinLvmd), 0o644)
	res := e.apply(o)
	if _, ok := e.get(defaultVSCRef); ok || slices.ContainsFunc(res.Created, defaultVSCRef.SameObject) {
		t.Errorf("a second default VolumeSnapshotClass was created next to the administrator's")
	}
}

// driver "none" after storage ran reports what remains; Prune removes workloads, RBAC and
// webhooks but never CRDs, the LVMCluster, StorageClasses or the namespace.
func TestPrune(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	e.apply(o)

	o.Storage.Driver = DriverNone
	var c counter
	o.RESTConfig = c.wrap(e.cfg)
	res := e.apply(o)
	if _, muts := c.snapshot(); len(muts) != 0 || len(res.Deleted) != 0 {
		t.Fatalf("driver none without Prune: mutating %v, deleted %v", muts, res.Deleted)
	}
	if !slices.ContainsFunc(res.Remaining, lvmsOperatorRef.SameObject) || len(res.Warnings) == 0 {
		t.Fatalf("remaining %v, warnings %q", refsNamed(res.Remaining), res.Warnings)
	}
	remaining := res.Remaining

	o.Prune = true
	res = e.apply(o)
	if !slices.Equal(refsNamed(res.Deleted), refsNamed(remaining)) {
		t.Errorf("pruned %v, want the remaining %v", refsNamed(res.Deleted), refsNamed(remaining))
	}
	for _, r := range remaining {
		if _, ok := e.get(r); ok {
			t.Errorf("%s still exists after prune", r)
		}
	}
	for _, r := range []ObjectRef{
		lvmClusterRef,
		{Version: "v1", Kind: "Namespace", Name: StorageNamespace},
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Name: "topolvm-provisioner"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "logicalvolumes.topolvm.io"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "lvmclusters.lvm.topolvm.io"},
		snapshotControllerRef,
	} {
		e.mustGet(r)
	}
	res = e.apply(o)
	if len(res.Remaining)+len(res.Deleted) != 0 {
		t.Errorf("second prune: remaining %v deleted %v", res.Remaining, res.Deleted)
	}
}

// MicroShift's config.yaml and config.d drop-ins, merged in MicroShift's order, gate the apply.
func TestDropInConfig(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml":                 "dns:\n  baseDomain: example.com\nstorage:\n  driver: none\n",
		"config.d/10-storage.yaml":    "storage:\n  driver: lvms\n",
		"config.d/20-csi/off.yaml":    "storage:\n  optionalCsiComponents: [none]\n",
		"config.d/30-not-yaml.yml":    "storage:\n  driver: bogus\n",
		"config.d/40-whitespace.yaml": "  \n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		mustMkdirAll(t, filepath.Dir(p), 0o755)
		mustWriteFile(t, p, []byte(data), 0o644)
	}
	storage, err := LoadStorageConfig(filepath.Join(dir, "config.yaml"), filepath.Join(dir, "config.d"))
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, "4.18")
	o.Storage = storage
	res := e.apply(o)
	e.mustGet(lvmsOperatorRef)
	if _, ok := e.get(snapshotControllerRef); ok || res.Plan.SnapshotController {
		t.Errorf("snapshot controller deployed although a drop-in disabled it (plan %+v)", res.Plan)
	}
}

package applier

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeHost is a host with LVM: volume groups and thin pools.
type fakeHost struct {
	vgs   []string
	pools []ThinPool
}

func (h fakeHost) VolumeGroups(context.Context) ([]string, error) { return h.vgs, nil }
func (h fakeHost) ThinPools(context.Context) ([]ThinPool, error)  { return h.pools, nil }

func TestHostProblems(t *testing.T) {
	cfg, err := parseLvmdConfig("lvmd.yaml", []byte(designLvmd))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		host VolumeGroupLister
		want []string // one substring per problem
	}{
		{"all there", fakeHost{vgs: []string{"rhel"}, pools: []ThinPool{{"rhel", "thinpool"}}}, nil},
		{"thin pools not listable", StaticVolumeGroups{"rhel"}, nil},
		{"volume group missing", fakeHost{vgs: []string{"data", "other"}}, []string{
			`device-classes[0].volume-group: device class "thick": volume group "rhel" does not exist on this host (volume groups: data, other)`,
			`device-classes[1].volume-group: device class "thin": volume group "rhel"`,
		}},
		{"no volume groups", StaticVolumeGroups{}, []string{"(volume groups: none)", "(volume groups: none)"}},
		{"thin pool missing", fakeHost{vgs: []string{"rhel"}, pools: []ThinPool{{"rhel", "other"}, {"data", "thinpool"}}}, []string{
			`device-classes[1].thin-pool.name: device class "thin": thin pool "thinpool" does not exist in volume group "rhel" (thin pools there: other)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, err := CheckLvmdHost(context.Background(), "lvmd.yaml", cfg, tc.host)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("problems %v, want %d", problems, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(problems[i].Error(), w) {
					t.Errorf("problem %d = %q, want %q", i, problems[i], w)
				}
			}
		})
	}
}

// A device class on a volume group the host does not have fails the storage component with an
// error naming class, group and the groups that exist; the failure is an Event in
// openshift-storage; the snapshot controller is still applied; a restart records nothing new.
func TestPreflightMissingVolumeGroup(t *testing.T) {
	e := newEnv(t)
	o := testOptions(t, "4.18")
	mustWriteFile(t, o.LvmdPath, []byte(strings.ReplaceAll(designLvmd, "volume-group: rhel\n  type: thin", "volume-group: data\n  type: thin")), 0o644)
	res, err := e.applyErr(o)
	var le *LvmdError
	var ce *ComponentError
	if !errors.As(err, &ce) || ce.Component != StorageComponent || !errors.As(err, &le) ||
		!strings.Contains(err.Error(), `device class "thin": volume group "data" does not exist on this host (volume groups: rhel)`) {
		t.Fatalf("Apply = %v, want a storage failure naming the class, the group and the host's groups", err)
	}
	e.mustGet(snapshotControllerRef)
	if _, ok := e.get(lvmsOperatorRef); ok || res.Components[1].Err != nil {
		t.Errorf("storage applied, or snapshot failed: %+v", res.Components)
	}
	events := func() []string {
		list, err := e.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(StorageNamespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range list.Items {
			if ev.Object["reason"] == PreflightEventReason && ev.Object["type"] == "Warning" {
				out = append(out, ev.Object["message"].(string))
			}
		}
		return out
	}
	got := events()
	if len(got) != 1 || !strings.Contains(got[0], `volume group "data" does not exist`) {
		t.Fatalf("events in %s: %q", StorageNamespace, got)
	}
	var c counter
	o.RESTConfig = c.wrap(e.cfg)
	ctx := context.Background()
	if _, err := Apply(ctx, o); err == nil {
		t.Fatal("second Apply succeeded")
	}
	if _, muts := c.snapshot(); len(muts) != 0 || len(events()) != 1 {
		t.Errorf("restart with the same problem wrote %v; events %q", muts, events())
	}
}

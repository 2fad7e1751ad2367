package kube

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fromYAML builds an object (or a FieldsV1 set) written as YAML in a test table.
func fromYAML(t *testing.T, y string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("%v in\n%s", err, y)
	}
	return m
}

// entry is a managedFields entry of manager with op owning the fields of set (YAML).
func entry(t *testing.T, manager string, op metav1.ManagedFieldsOperationType, set string) metav1.ManagedFieldsEntry {
	t.Helper()
	raw, err := json.Marshal(fromYAML(t, set))
	if err != nil {
		t.Fatal(err)
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}
}

// sentRole is a ClusterRole as the applier sends it, and appliedRoleFields the set its Apply
// entry then owns.
const (
	sentRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: lvms-operator, labels: {app: lvms}}
rules:
- apiGroups: [lvm.topolvm.io]
  resources: [lvmclusters]
  verbs: [get, list]
`
	appliedRoleFields = `
f:metadata: {f:annotations: {f:lvms.microshift.io/applied-hash: {}, f:lvms.microshift.io/applied-content: {}}, f:labels: {f:app: {}}}
f:rules: {}
`
)

// appliedRole is sentRole on the cluster as the applier left it: the applied-hash annotation of
// what was sent, the applier's Apply entry, the applied-content record of what it owns, and
// more fields written by others (the server's metadata, another writer's label).
func appliedRole(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: fromYAML(t, sentRole)}
	hash, err := setAppliedHash(u)
	if err != nil || hash == "" {
		t.Fatal(err)
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{entry(t, FieldManager, metav1.ManagedFieldsOperationApply, `f:metadata: {f:annotations: {f:lvms.microshift.io/applied-hash: {}}, f:labels: {f:app: {}}}
f:rules: {}`)})
	content, err := contentHash(u) // what the dry run shows, before the record is added
	if err != nil {
		t.Fatal(err)
	}
	ann := u.GetAnnotations()
	ann[AppliedContentAnnotation] = content
	u.SetAnnotations(ann)
	u.SetUID("u-1")
	u.SetResourceVersion("7")
	labels := u.GetLabels()
	labels["team"] = "storage"
	u.SetLabels(labels)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		entry(t, FieldManager, metav1.ManagedFieldsOperationApply, appliedRoleFields),
		entry(t, "kubectl-label", metav1.ManagedFieldsOperationUpdate, `f:metadata: {f:labels: {f:team: {}}}`),
	})
	return u
}

// The applier's proof: its Apply entry owns the applied-hash, and the fields it owns hash to it.
// Each way of faking or disturbing one part fails with a reason naming it.
func TestAppliedProof(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, u *unstructured.Unstructured)
		want   string // "" = proven
	}{
		{"as applied, others' labels beside", func(*testing.T, *unstructured.Unstructured) {}, ""},
		{"annotation copied onto kubectl's object", func(t *testing.T, u *unstructured.Unstructured) {
			u.SetManagedFields([]metav1.ManagedFieldsEntry{entry(t, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate,
				appliedRoleFields)})
		}, "no server-side apply by microshift-storage (written by kubectl-client-side-apply (Update))"},
		{"our manager name, but an Update", func(t *testing.T, u *unstructured.Unstructured) {
			u.SetManagedFields([]metav1.ManagedFieldsEntry{entry(t, FieldManager, metav1.ManagedFieldsOperationUpdate, appliedRoleFields)})
		}, "no server-side apply by microshift-storage"},
		{"annotation set by someone else", func(t *testing.T, u *unstructured.Unstructured) {
			u.SetManagedFields([]metav1.ManagedFieldsEntry{
				entry(t, FieldManager, metav1.ManagedFieldsOperationApply, `{f:metadata: {f:labels: {f:app: {}}, f:annotations: {f:lvms.microshift.io/applied-hash: {}}}, f:rules: {}}`),
				entry(t, "kubectl-annotate", metav1.ManagedFieldsOperationUpdate, `f:metadata: {f:annotations: {f:lvms.microshift.io/applied-content: {}}}`),
			})
		}, "applied-content annotation was not set by microshift-storage"},
		{"a rule changed under the applier's name", func(t *testing.T, u *unstructured.Unstructured) {
			u.Object["rules"] = []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}}}
		}, "no longer match its lvms.microshift.io/applied-content"},
		{"a rule moved to kubectl edit", func(t *testing.T, u *unstructured.Unstructured) {
			u.Object["rules"] = []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}}}
			u.SetManagedFields([]metav1.ManagedFieldsEntry{
				entry(t, FieldManager, metav1.ManagedFieldsOperationApply, `f:metadata: {f:annotations: {f:lvms.microshift.io/applied-hash: {}, f:lvms.microshift.io/applied-content: {}}, f:labels: {f:app: {}}}`),
				entry(t, "kubectl-edit", metav1.ManagedFieldsOperationUpdate, `f:rules: {}`),
			})
		}, "no longer match"},
		{"an owned field gone", func(t *testing.T, u *unstructured.Unstructured) {
			delete(u.Object, "rules")
		}, "rules: owned field is gone"},
		{"hash annotation rewritten", func(t *testing.T, u *unstructured.Unstructured) {
			ann := u.GetAnnotations()
			ann[AppliedHashAnnotation] = "0000"
			u.SetAnnotations(ann)
		}, "no longer match"},
		{"content record rewritten", func(t *testing.T, u *unstructured.Unstructured) {
			ann := u.GetAnnotations()
			ann[AppliedContentAnnotation] = "0000"
			u.SetAnnotations(ann)
		}, "no longer match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := appliedRole(t)
			tc.mutate(t, u)
			ok, why := appliedProof(u)
			if ok != (tc.want == "") || !strings.Contains(why, tc.want) {
				t.Errorf("appliedProof = %v, %q; want proven=%v, reason containing %q", ok, why, tc.want == "", tc.want)
			}
		})
	}
}

// ownedContent reads keyed, set and indexed list items and atomic leaves without a schema, in
// the live order, with the owned fields only.
func TestOwnedContent(t *testing.T) {
	live := fromYAML(t, `
metadata: {name: x, labels: {a: "1", b: "2"}, finalizers: [f1, f2]}
spec:
  selector: {matchLabels: {app: x}}
  replicas: 1
  template:
    spec:
      containers:
      - {name: other, image: o}
      - name: main
        image: m
        ports: [{containerPort: 8080, protocol: TCP}, {containerPort: 9090, protocol: TCP}]
        args: [--a, --b]
`)
	set := `
f:metadata: {f:labels: {f:a: {}}, f:finalizers: {'v:"f2"': {}}}
f:spec:
  f:selector: {}
  f:template:
    f:spec:
      f:containers:
        'k:{"name":"main"}':
          .: {}
          f:name: {}
          f:image: {}
          f:args: {}
          f:ports:
            'k:{"containerPort":9090,"protocol":"TCP"}': {.: {}, f:containerPort: {}}
`
	raw, _ := json.Marshal(fromYAML(t, set))
	got, err := ownedContent(live, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := fromYAML(t, `
metadata: {labels: {a: "1"}, finalizers: [f2]}
spec:
  selector: {matchLabels: {app: x}}
  template:
    spec:
      containers:
      - name: main
        image: m
        args: [--a, --b]
        ports: [{containerPort: 9090}]
`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owned content (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		`f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"gone"}': {}}}}}`,
		`f:spec: {f:missing: {}}`,
		`f:spec: {f:replicas: {f:x: {}}}`,
		`f:metadata: {f:finalizers: {'q:1': {}}}`,
	} {
		raw, _ := json.Marshal(fromYAML(t, bad))
		if _, err := ownedContent(live, raw); err == nil {
			t.Errorf("ownedContent with %s: no error", bad)
		}
	}
}

// OLM's labels and owner references mark an object as an OLM install's.
func TestOLMMark(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		owners []metav1.OwnerReference
		want   string
	}{
		{nil, nil, ""},
		{map[string]string{"app": "lvms"}, nil, ""},
		{map[string]string{"olm.owner": "lvms-operator.v4.18.0"}, nil, "label olm.owner=lvms-operator.v4.18.0"},
		{map[string]string{"olm.owner.kind": "ClusterServiceVersion"}, nil, "label olm.owner.kind"},
		{map[string]string{"operators.coreos.com/lvms-operator.openshift-storage": ""}, nil, "label operators.coreos.com/lvms-operator.openshift-storage"},
		{map[string]string{"olm.managed": "true"}, nil, "label olm.managed"},
		{nil, []metav1.OwnerReference{{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Name: "lvms.v4.18"}}, "owner ClusterServiceVersion lvms.v4.18"},
		{nil, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "openshift-storage"}}, ""},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetLabels(tc.labels)
		u.SetOwnerReferences(tc.owners)
		if got := olmMark(u); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("olmMark(%v, %v) = %q, want %q", tc.labels, tc.owners, got, tc.want)
		}
	}
}

// MicroShift's start-up code before the applier is proven by its Update entry, the content its
// files shipped, and nothing beyond what one era shipped; the manager name alone, an Apply by
// that name, other content, or MicroShift's content plus more (a subject, a rule, a changed
// verb) is not. (Before, MicroShift's content plus anything was proof enough.)
func TestShippedProof(t *testing.T) {
	binding := func(role, extra string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: fromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: topolvm-node, labels: {added-by: someone}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: `+role+`}
subjects: [{kind: ServiceAccount, name: topolvm-node, namespace: openshift-storage}`+extra+`]
`)}
	}
	role := func(rules string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: fromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: topolvm-node}
rules: `+rules)}
	}
	shipped := fromYAML(t, `{roleRef: {kind: ClusterRole, name: topolvm-node}, subjects: [{kind: ServiceAccount, name: topolvm-node, namespace: openshift-storage}]}`)
	bounds := []map[string]any{BoundedFields(binding("topolvm-node", "").Object)}
	roleShipped := fromYAML(t, `rules: [{apiGroups: [topolvm.io], resources: [logicalvolumes]}]`)
	roleBounds := []map[string]any{
		BoundedFields(role(`[{apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [get, list]}]`).Object),
		BoundedFields(role(`[{apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [get, list, watch]}, {apiGroups: [""], resources: [nodes], verbs: [get]}]`).Object),
	}
	legacy := []metav1.ManagedFieldsEntry{entry(t, LegacyManager, metav1.ManagedFieldsOperationUpdate, `{}`)}
	for _, tc := range []struct {
		name    string
		u       *unstructured.Unstructured
		entries []metav1.ManagedFieldsEntry
		c       Candidate
		want    string
	}{
		{"MicroShift's (a label added: not bounded)", binding("topolvm-node", ""), legacy, Candidate{Shipped: shipped, Bounds: bounds}, ""},
		{"a client calling itself microshift, other content", binding("cluster-admin", ""), legacy, Candidate{Shipped: shipped, Bounds: bounds}, "roleRef.name differs"},
		{"MicroShift's plus a subject", binding("topolvm-node", ", {kind: User, name: someone}"), legacy, Candidate{Shipped: shipped, Bounds: bounds},
			"subjects[1] is not in what any era shipped (written by microshift (Update))"},
		{"MicroShift's plus a field of a subject", binding("topolvm-node", ", {kind: ServiceAccount, name: topolvm-node, namespace: openshift-storage, apiGroup: x}"), legacy,
			Candidate{Shipped: shipped, Bounds: bounds}, "subjects[1] is not in what any era shipped"},
		{"an era's rules", role(`[{apiGroups: [""], resources: [nodes], verbs: [get]}, {apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [list, get, watch]}]`), legacy,
			Candidate{Shipped: roleShipped, Bounds: roleBounds}, ""},
		{"an era's rules plus secrets get", role(`[{apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [get, list]}, {apiGroups: [""], resources: [secrets], verbs: [get]}]`), legacy,
			Candidate{Shipped: roleShipped, Bounds: roleBounds}, "rules[1] is not in what any era shipped"},
		{"a changed verb", role(`[{apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [get, delete]}]`), legacy,
			Candidate{Shipped: roleShipped, Bounds: roleBounds}, "rules[0] is not in what any era shipped"},
		{"one era's rules mixed with another's", role(`[{apiGroups: [topolvm.io], resources: [logicalvolumes], verbs: [get, list]}, {apiGroups: [""], resources: [nodes], verbs: [get]}]`), legacy,
			Candidate{Shipped: roleShipped, Bounds: roleBounds[:1]}, "rules[1] is not in what any era shipped"},
		{"no era's content recorded", binding("topolvm-node", ""), legacy, Candidate{Shipped: shipped}, "no era's content of it is recorded"},
		{"an Apply named microshift", binding("topolvm-node", ""), []metav1.ManagedFieldsEntry{entry(t, LegacyManager, metav1.ManagedFieldsOperationApply, `{}`)},
			Candidate{Shipped: shipped, Bounds: bounds}, `no "microshift" Update entry`},
		{"someone else's", binding("topolvm-node", ""), []metav1.ManagedFieldsEntry{entry(t, "kubectl", metav1.ManagedFieldsOperationUpdate, `{}`)},
			Candidate{Shipped: shipped, Bounds: bounds}, `no "microshift" Update entry`},
		{"not an object MicroShift shipped", binding("topolvm-node", ""), legacy, Candidate{Bounds: bounds}, "-"},
		{"MicroShift's, shipped with no content", &unstructured.Unstructured{Object: fromYAML(t, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: x}}`)}, legacy,
			Candidate{Shipped: map[string]any{}, Bounds: []map[string]any{{}}}, ""},
		{"a ServiceAccount MicroShift shipped bare, with a pull secret added", &unstructured.Unstructured{Object: fromYAML(t, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: x}, imagePullSecrets: [{name: s}]}`)}, legacy,
			Candidate{Shipped: map[string]any{}, Bounds: []map[string]any{{}}}, "imagePullSecrets is not in what any era shipped"},
		{"a bare object nobody wrote: nothing proves it", binding("topolvm-node", ""), nil, Candidate{Shipped: map[string]any{}, Bounds: bounds}, `no "microshift" Update entry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.u.SetManagedFields(tc.entries)
			ok, why := shippedProof(tc.u, tc.c)
			if tc.want == "-" {
				if ok || why != "" {
					t.Errorf("shippedProof = %v, %q; want no proof and no reason", ok, why)
				}
				return
			}
			if ok != (tc.want == "") || !strings.Contains(why, tc.want) {
				t.Errorf("shippedProof = %v, %q; want proven=%v, reason containing %q", ok, why, tc.want == "", tc.want)
			}
		})
	}
}

// Bounded fields: per kind, the fields cut out of an object (lists by element, maps by key
// where only keys are bounded); a kind without any gives nothing.
func TestBoundedFields(t *testing.T) {
	for _, tc := range []struct{ obj, want string }{
		{`{kind: Role, metadata: {name: r, labels: {a: b}}, rules: [{verbs: [get]}]}`, `{rules: [{verbs: [get]}]}`},
		{`{kind: ConfigMap, data: {lvmd.yaml: "device-classes: []", other: x}}`, `{data: {lvmd.yaml: null, other: null}}`},
		{`{kind: DaemonSet, spec: {selector: {matchLabels: {a: b}}, template: {spec: {serviceAccountName: s, containers: [{name: c, image: i}],
			volumes: [{name: v, hostPath: {path: /run, type: Directory}}, {name: w, configMap: {name: x}}]}}}}`,
			`{spec: {selector: {matchLabels: {a: b}}, template: {spec: {serviceAccountName: s, containers: [{name: c}], volumes: [{name: v, hostPath: {path: /run}}, {name: w}]}}}}`},
		{`{kind: LVMCluster, spec: {storage: {}}}`, `{}`},
	} {
		got := BoundedFields(fromYAML(t, tc.obj))
		if want := fromYAML(t, tc.want); !reflect.DeepEqual(got, want) {
			t.Errorf("BoundedFields(%s) = %v, want %v", tc.obj, got, want)
		}
	}
}

// Shipped content matches by subset: map keys with equal values, null for any value, and list
// elements found anywhere in the live list.
func TestMatchesShipped(t *testing.T) {
	live := fromYAML(t, `{data: {lvmd.yaml: "x"}, rules: [{apiGroups: [""], resources: [nodes]}, {apiGroups: [topolvm.io], resources: [logicalvolumes, logicalvolumes/status], verbs: [get]}]}`)
	for _, tc := range []struct {
		shipped string
		want    string // "" = matches, else the path reported
	}{
		{`{}`, ""},
		{`{data: {lvmd.yaml: null}}`, ""},
		{`{data: {other: null}}`, "data.other"},
		{`{rules: [{apiGroups: [topolvm.io], resources: [logicalvolumes]}]}`, ""},
		{`{rules: [{apiGroups: [topolvm.io], resources: [pods]}]}`, "rules[0]"},
		{`{rules: {a: b}}`, "rules"},
	} {
		path, ok := matchesShipped(live, fromYAML(t, tc.shipped), "")
		if ok != (tc.want == "") || path != tc.want {
			t.Errorf("matchesShipped(%s) = %q, %v; want %q", tc.shipped, path, ok, tc.want)
		}
	}
}

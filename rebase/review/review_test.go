package review

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decode(t *testing.T, files map[string]string) []Object {
	t.Helper()
	m := map[string][]byte{}
	for p, s := range files {
		m["assets/components/lvms/"+p] = []byte(s)
	}
	objs, err := Decode(m, []string{"assets/components/lvms"})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const baseRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: lvms-operator
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update]
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
`

func withRules(rules string) string { return baseRole + rules }

func TestReviewRBAC(t *testing.T) {
	tests := []struct {
		name        string
		new         map[string]string
		changed     bool
		escalations []string // role|class
	}{
		{name: "unchanged", new: map[string]string{"r.yaml": baseRole}},
		{name: "benign read of a new resource", changed: true,
			new: map[string]string{"r.yaml": withRules("- apiGroups: [storage.k8s.io]\n  resources: [volumeattachments]\n  verbs: [get, list, watch]\n")}},
		{name: "narrower rule already covered", changed: true,
			new: map[string]string{"r.yaml": withRules("- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [create]\n")}},
		{name: "secrets", changed: true, escalations: []string{"ClusterRole lvms-operator|secrets"},
			new: map[string]string{"r.yaml": withRules("- apiGroups: [\"\"]\n  resources: [secrets]\n  verbs: [get, list, watch]\n")}},
		{name: "wildcard verbs", changed: true, escalations: []string{"ClusterRole lvms-operator|wildcard", "ClusterRole lvms-operator|cluster-write"},
			new: map[string]string{"r.yaml": withRules("- apiGroups: [lvm.topolvm.io]\n  resources: [lvmclusters]\n  verbs: [\"*\"]\n")}},
		{name: "impersonate", changed: true, escalations: []string{"ClusterRole lvms-operator|escalate-bind-impersonate"},
			new: map[string]string{"r.yaml": withRules("- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [impersonate]\n")}},
		{name: "cluster write", changed: true, escalations: []string{"ClusterRole lvms-operator|cluster-write"},
			new: map[string]string{"r.yaml": withRules("- apiGroups: [storage.k8s.io]\n  resources: [storageclasses]\n  verbs: [delete]\n")}},
		{name: "node write and pods/exec", changed: true, escalations: []string{"ClusterRole lvms-operator|cluster-write", "ClusterRole lvms-operator|nodes-exec"},
			new: map[string]string{"r.yaml": withRules("- apiGroups: [\"\"]\n  resources: [nodes, pods/exec]\n  verbs: [create]\n")}},
		{name: "new binding of an existing role", changed: true, escalations: []string{"ClusterRoleBinding other|cluster-write", "ClusterRoleBinding other|nodes-exec"},
			new: map[string]string{"r.yaml": baseRole, "b.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: other
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: lvms-operator}
subjects:
- {kind: ServiceAccount, name: other, namespace: openshift-storage}
`}},
		{name: "binding to cluster-admin", changed: true, escalations: []string{"ClusterRoleBinding lvms-operator-admin|admin-binding"},
			new: map[string]string{"r.yaml": baseRole, "b.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: lvms-operator-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {kind: ServiceAccount, name: lvms-operator, namespace: openshift-storage}
`}},
	}
	old := decode(t, map[string]string{"r.yaml": baseRole})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rv, err := ReviewRBAC(old, decode(t, tt.new))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range rv.Escalations {
				got = append(got, e.Role+"|"+e.Class)
				if !strings.Contains(e.Rule, "=") {
					t.Errorf("escalation without rule: %+v", e)
				}
			}
			if rv.Changed != tt.changed || !reflect.DeepEqual(got, tt.escalations) {
				t.Errorf("changed %v escalations %q, want %v %q (%+v)", rv.Changed, got, tt.changed, tt.escalations, rv)
			}
		})
	}
}

func TestNewWorkloads(t *testing.T) {
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: openshift-storage}\n"
	hook := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: m}
webhooks:
- name: m.kb.io
  clientConfig: {service: {name: s, namespace: openshift-storage}}
`
	old := decode(t, map[string]string{"a.yaml": dep})
	got := NewWorkloads(old, decode(t, map[string]string{"a.yaml": dep, "b.yaml": strings.Replace(dep, "name: a", "name: b", 1), "m.yaml": hook}))
	want := []string{
		"new workload: Deployment openshift-storage/b (assets/components/lvms/b.yaml): runs on every MicroShift node",
		"new workload: MutatingWebhookConfiguration m (assets/components/lvms/m.yaml): every matching API request on every MicroShift node calls Service openshift-storage/s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

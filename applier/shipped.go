package applier

import (
	_ "embed"
	"fmt"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
)

// shippedContent is, for every object MicroShift's own start-up code created before the applier
// under a name the applier may delete (the TopoLVM objects the LVMS era removes, the LVMS objects
// a rollback to TopoLVM removes, the snapshot webhook's), content MicroShift's files gave it in
// every era that shipped it: a selector, a role reference and its subjects, a rule the role always
// had. That code (library-go's resourceapply) recorded no field manager of its own, so the API
// server names it "microshift" — as it names any client calling itself that; the content is what
// tells MicroShift's object from another one of the same name (kube.Candidate.Shipped; a null
// value asks only for the key, a list for elements the live list has). ServiceAccounts carry no
// content: their name and MicroShift's entry are all there is. TestShippedContentMatchesAssets
// holds every entry to the assets of every era that ships the object.
var shippedContent = map[string]string{
	// TopoLVM (4.14–4.16), removed by the LVMS era (MicroShift 4.17's deleteLegacyResources).
	"Deployment.apps openshift-storage/topolvm-controller": `spec: {selector: {matchLabels: {app.kubernetes.io/component: topolvm-controller, app.kubernetes.io/name: topolvm-csi-driver}}}`,
	"DaemonSet.apps openshift-storage/topolvm-node":        `spec: {selector: {matchLabels: {app.kubernetes.io/component: topolvm-node, app.kubernetes.io/name: topolvm-csi-driver}}}`,
	"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node-scc": `{roleRef: {kind: ClusterRole, name: topolvm-node-scc},
		subjects: [{kind: ServiceAccount, name: topolvm-node, namespace: openshift-storage}]}`,
	"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-node": `{roleRef: {kind: ClusterRole, name: topolvm-node},
		subjects: [{kind: ServiceAccount, name: topolvm-node, namespace: openshift-storage}]}`,
	"ClusterRoleBinding.rbac.authorization.k8s.io topolvm-controller": `{roleRef: {kind: ClusterRole, name: topolvm-controller},
		subjects: [{kind: ServiceAccount, name: topolvm-controller, namespace: openshift-storage}]}`,
	"RoleBinding.rbac.authorization.k8s.io openshift-storage/topolvm-controller": `{roleRef: {kind: Role, name: topolvm-controller},
		subjects: [{kind: ServiceAccount, name: topolvm-controller, namespace: openshift-storage}]}`,
	"Role.rbac.authorization.k8s.io openshift-storage/topolvm-controller": `rules: [{apiGroups: [coordination.k8s.io], resources: [leases]}]`,
	"ClusterRole.rbac.authorization.k8s.io topolvm-controller":            `rules: [{apiGroups: [topolvm.io], resources: [logicalvolumes]}]`,
	"ClusterRole.rbac.authorization.k8s.io topolvm-node-scc": `rules: [{apiGroups: [security.openshift.io], resources: [securitycontextconstraints],
		resourceNames: [topolvm-node], verbs: [use]}]`,
	"ClusterRole.rbac.authorization.k8s.io topolvm-node":                                          `rules: [{apiGroups: [topolvm.io], resources: [logicalvolumes]}]`,
	"ServiceAccount openshift-storage/topolvm-controller":                                         `{}`,
	"ServiceAccount openshift-storage/topolvm-node":                                               `{}`,
	"ConfigMap openshift-storage/lvmd":                                                            `data: {lvmd.yaml: null}`,
	"SecurityContextConstraints.security.openshift.io topolvm-node":                               `users: [system:serviceaccount:openshift-storage:topolvm-node]`,
	"LVMCluster.lvm.topolvm.io openshift-storage/lvms":                                            `{}`,
	"ValidatingWebhookConfiguration.admissionregistration.k8s.io vlvmcluster.kb.io-lvms-operator": `webhooks: [{clientConfig: {service: {name: lvms-webhook-service, namespace: openshift-storage}}}]`,
	// LVMS (4.17+), removed by a rollback to the TopoLVM era. vg-manager is the operator's.
	"Deployment.apps openshift-storage/lvms-operator":                       `spec: {selector: {matchLabels: {app.kubernetes.io/name: lvms-operator}}}`,
	"Service openshift-storage/lvms-webhook-service":                        `spec: {selector: {app.kubernetes.io/name: lvms-operator}}`,
	"Service openshift-storage/lvms-operator-metrics-service":               `spec: {selector: {app.kubernetes.io/name: lvms-operator}}`,
	"Service openshift-storage/vg-manager-metrics-service":                  `spec: {selector: {app.kubernetes.io/name: vg-manager}}`,
	"ClusterRoleBinding.rbac.authorization.k8s.io lvms-operator":            `{roleRef: {kind: ClusterRole, name: lvms-operator}, subjects: [{kind: ServiceAccount, name: lvms-operator, namespace: openshift-storage}]}`,
	"ClusterRoleBinding.rbac.authorization.k8s.io vg-manager":               `{roleRef: {kind: ClusterRole, name: vg-manager}, subjects: [{kind: ServiceAccount, name: vg-manager, namespace: openshift-storage}]}`,
	"RoleBinding.rbac.authorization.k8s.io openshift-storage/lvms-operator": `{roleRef: {kind: Role, name: lvms-operator}, subjects: [{kind: ServiceAccount, name: lvms-operator, namespace: openshift-storage}]}`,
	"RoleBinding.rbac.authorization.k8s.io openshift-storage/vg-manager":    `{roleRef: {kind: Role, name: vg-manager}, subjects: [{kind: ServiceAccount, name: vg-manager, namespace: openshift-storage}]}`,
	"RoleBinding.rbac.authorization.k8s.io openshift-storage/lvms-metrics": `{roleRef: {kind: Role, name: lvms-metrics},
		subjects: [{kind: ServiceAccount, name: prometheus-k8s, namespace: openshift-monitoring}]}`,
	"Role.rbac.authorization.k8s.io openshift-storage/lvms-operator": `rules: [{apiGroups: [coordination.k8s.io], resources: [leases]}]`,
	"Role.rbac.authorization.k8s.io openshift-storage/vg-manager":    `rules: [{apiGroups: [lvm.topolvm.io], resources: [lvmvolumegroups]}]`,
	"Role.rbac.authorization.k8s.io openshift-storage/lvms-metrics":  `rules: [{resources: [services, endpoints, pods]}]`,
	"ClusterRole.rbac.authorization.k8s.io lvms-operator":            `rules: [{apiGroups: [lvm.topolvm.io], resources: [lvmclusters]}]`,
	"ClusterRole.rbac.authorization.k8s.io vg-manager":               `rules: [{apiGroups: [topolvm.io], resources: [logicalvolumes]}]`,
	"ServiceAccount openshift-storage/lvms-operator":                 `{}`,
	"ServiceAccount openshift-storage/vg-manager":                    `{}`,
	// The snapshot validation webhook (4.14–4.17), removed from 4.18 (MicroShift's deleteCSIWebhook).
	"ValidatingWebhookConfiguration.admissionregistration.k8s.io snapshot.storage.k8s.io": `webhooks: [{clientConfig: {service: {name: csi-snapshot-webhook}}}]`,
	"Deployment.apps kube-system/csi-snapshot-webhook":                                    `spec: {selector: {matchLabels: {app: csi-snapshot-webhook}}}`,
	"Service kube-system/csi-snapshot-webhook":                                            `spec: {selector: {app: csi-snapshot-webhook}}`,
	"ServiceAccount kube-system/csi-snapshot-webhook":                                     `{}`,
	"ClusterRole.rbac.authorization.k8s.io csi-snapshot-webhook-clusterrole":              `rules: [{apiGroups: [snapshot.storage.k8s.io], resources: [volumesnapshotclasses]}]`,
	"ClusterRoleBinding.rbac.authorization.k8s.io csi-snapshot-webhook-clusterrolebinding": `{roleRef: {kind: ClusterRole, name: csi-snapshot-webhook-clusterrole},
		subjects: [{kind: ServiceAccount, name: csi-snapshot-webhook}]}`,
}

// operatorCreated are objects an operator MicroShift deploys creates for an object MicroShift
// applied, by the controlling object: the LVMS operator creates the vg-manager DaemonSet for the
// LVMCluster (kube.Candidate.Controller).
var operatorCreated = map[string]ObjectRef{
	daemonSetRef(StorageNamespace, "vg-manager").String(): lvmClusterMarker,
}

// shippedBounds is, for every object of shippedContent, its bounded fields as each era's
// assets ship it (kube.BoundedFields, kube.Candidate.Bounds): MicroShift's object before the
// applier holds one era's, and nothing more. It is era data generated from every era's asset
// trees — MicroShift's LVMS-era branches, the fixtures, the rebase's golden trees — by
// internal/cmd/shippedbounds; TestShippedContentMatchesAssets holds it to the trees in the
// repository. An object MicroShift shipped otherwise (a branch not in it) is not proven: it is
// left and reported, never deleted.
//
//go:embed shipped_bounds.yaml
var shippedBoundsYAML []byte

var parsedBounds = sync.OnceValue(func() map[string][]map[string]any {
	out := map[string][]map[string]any{}
	if err := yaml.Unmarshal(shippedBoundsYAML, &out); err != nil {
		panic(fmt.Sprintf("shipped_bounds.yaml: %v", err))
	}
	return out
})

// boundsOf is ref's kube.Candidate.Bounds: the recorded eras' content, or, for a kind with no
// bounded fields (the LVMCluster, whose spec is the host's), the empty bound.
func boundsOf(ref ObjectRef) []map[string]any {
	if b, ok := parsedBounds()[ref.String()]; ok {
		return b
	}
	if !kube.HasBoundedFields(ref.Kind) {
		return []map[string]any{{}}
	}
	return nil
}

// parsedShipped decodes shippedContent once; an entry that is not a YAML mapping is a
// programming error the tests catch.
var parsedShipped = sync.OnceValue(func() map[string]map[string]any {
	out := map[string]map[string]any{}
	for ref, y := range shippedContent {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(y), &m); err != nil {
			panic(fmt.Sprintf("shippedContent[%s]: %v", ref, err))
		}
		out[ref] = m
	}
	return out
})

// candidates turns deletion candidates into what proves each MicroShift's: the content
// MicroShift shipped it with, and the controlling object of what an operator creates.
func candidates(refs []ObjectRef) []kube.Candidate {
	out := make([]kube.Candidate, 0, len(refs))
	for _, r := range refs {
		c := kube.Candidate{Ref: r, Shipped: parsedShipped()[r.String()], Bounds: boundsOf(r)}
		if ctrl, ok := operatorCreated[r.String()]; ok {
			c.Controller = &kube.Candidate{Ref: ctrl, Shipped: parsedShipped()[ctrl.String()], Bounds: boundsOf(ctrl)}
		}
		out = append(out, c)
	}
	return out
}

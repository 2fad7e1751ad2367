// Package kinds is the one home of what the rebase knows about Kubernetes kinds by name:
// which of the kinds MicroShift's storage assets may contain are cluster-scoped. The bundle
// translation strips or sets namespaces by it and render checks the assets against it.
package kinds

// clusterScoped are the cluster-scoped kinds the assets may contain (LVMS bundle objects,
// the snapshot controller's, and MicroShift's own); any other kind is namespaced.
var clusterScoped = map[string]bool{
	"CSIDriver":                      true,
	"ClusterRole":                    true,
	"ClusterRoleBinding":             true,
	"CustomResourceDefinition":       true,
	"MutatingWebhookConfiguration":   true,
	"Namespace":                      true,
	"PriorityClass":                  true,
	"SecurityContextConstraints":     true,
	"StorageClass":                   true,
	"ValidatingWebhookConfiguration": true,
	"VolumeSnapshotClass":            true,
}

// ClusterScoped reports whether objects of kind have no namespace.
func ClusterScoped(kind string) bool { return clusterScoped[kind] }

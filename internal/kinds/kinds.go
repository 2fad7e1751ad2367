// Package kinds is what the rebase knows about Kubernetes kinds by name: which of the kinds
// MicroShift's storage assets may contain are cluster-scoped. The bundle translation strips or
// sets namespaces by it and render checks the assets against it. The list itself is the applier
// module's (applier/eras), which the applier's tests check against a real API server: the rebase
// writes what the applier applies, so both sides read one list.
package kinds

import "github.com/lvms-rebase/lvms-rebase/applier/eras"

// ClusterScoped reports whether objects of kind have no namespace.
func ClusterScoped(kind string) bool { return eras.ClusterScoped(kind) }

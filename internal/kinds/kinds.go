// Package kinds is what the rebase knows about Kubernetes kinds by name: which of the kinds
// MicroShift's storage assets may contain are cluster-scoped, and the order they are applied
// in. The bundle translation strips or sets namespaces by the first and lists its objects in
// the second; render checks the assets against the first. Both lists are the applier module's
// (applier/eras), which the applier's tests check against a real API server and applies by:
// the rebase writes what the applier applies, so both sides read one list.
package kinds

import "github.com/lvms-rebase/lvms-rebase/applier/eras"

// ClusterScoped reports whether objects of kind have no namespace.
func ClusterScoped(kind string) bool { return eras.ClusterScoped(kind) }

// Rank is kind's place in the order the applier applies kinds in (eras.KindOrder); a kind
// without one ranks after every kind with one.
func Rank(kind string) int {
	if r := eras.KindRank(kind); r >= 0 {
		return r
	}
	return len(eras.KindOrder())
}

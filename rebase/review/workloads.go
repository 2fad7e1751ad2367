package review

import (
	"fmt"
	"slices"
	"strings"
)

// workloadKinds change what runs on, or is called by, every MicroShift node.
var workloadKinds = []string{"Deployment", "DaemonSet", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}

// NewWorkloads returns one warning per workload or admission webhook of new that old lacks:
// "new workload: Deployment openshift-storage/x (assets/…/x.yaml): …".
func NewWorkloads(old, new []Object) []string {
	had := map[string]bool{}
	for _, o := range old {
		had[o.ID()] = true
	}
	var out []string
	for _, o := range new {
		if !slices.Contains(workloadKinds, o.Obj.GetKind()) || had[o.ID()] {
			continue
		}
		out = append(out, fmt.Sprintf("new workload: %s (%s): %s", o.ID(), o.File, what(o)))
	}
	return out
}

func what(o Object) string {
	switch o.Obj.GetKind() {
	case "Deployment", "DaemonSet":
		return "runs on every MicroShift node"
	}
	var svcs []string
	hooks, _ := o.Obj.Object["webhooks"].([]any)
	for _, h := range hooks {
		hm, _ := h.(map[string]any)
		cc, _ := hm["clientConfig"].(map[string]any)
		if svc, ok := cc["service"].(map[string]any); ok {
			svcs = append(svcs, fmt.Sprintf("%v/%v", svc["namespace"], svc["name"]))
		}
	}
	return "every matching API request on every MicroShift node calls Service " + strings.Join(svcs, ", ")
}

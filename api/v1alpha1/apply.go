package v1alpha1

// ApplyResult is what `apply` did to a cluster (or, with --dry-run, would do). Every list is
// printed, empty as [].
type ApplyResult struct {
	TypeMeta `json:",inline"`
	// Era is the assets' era as the applier read it from the assets.
	Era string `json:"era"`
	// Lvmd says what became of lvmd's configuration.
	Lvmd string `json:"lvmd,omitempty"`
	// LvmdPath is the lvmd configuration file used.
	LvmdPath string `json:"lvmdPath,omitempty"`
	// LvmdChecksum is the sha256 of the lvmd configuration applied.
	LvmdChecksum string `json:"lvmdChecksum,omitempty"`
	// RuntimeLvmdWritten is true when the runtime copy of lvmd's configuration was written.
	RuntimeLvmdWritten bool `json:"runtimeLvmdWritten"`
	// Created are the objects created.
	Created []Object `json:"created"`
	// Updated are the objects updated.
	Updated []Object `json:"updated"`
	// Deleted are the objects deleted.
	Deleted []Object `json:"deleted"`
	// Unchanged are the objects already as the assets say.
	Unchanged []Object `json:"unchanged"`
	// Skipped are the objects not applied, with why.
	Skipped []SkippedObject `json:"skipped"`
	// Warnings are what an operator should know.
	Warnings []string `json:"warnings"`
	// Remaining are objects of switched-off components still on the cluster: without --prune
	// every one found, with it those the prune left (kept says why).
	Remaining []Object `json:"remaining"`
	// Foreign are objects the applier would have deleted but cannot prove MicroShift's: left
	// alone.
	Foreign []Object `json:"foreign"`
	// Kept are all objects the applier would have deleted and left on the cluster, with why.
	Kept []SkippedObject `json:"kept"`
	// Components are the components with whether the configuration enables them.
	Components []Component `json:"components"`
}

// Object names one Kubernetes object.
type Object struct {
	// Group is the API group, empty for the core group.
	Group string `json:"group,omitempty"`
	// Version is the API version.
	Version string `json:"version"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Namespace is empty for a cluster-scoped object.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name"`
}

// SkippedObject is an object left alone, with why.
type SkippedObject struct {
	Object `json:",inline"`
	// Reason says why.
	Reason string `json:"reason"`
}

// Component is one component of the assets (lvms, csi-snapshot-controller, …).
type Component struct {
	// Name is the component's name.
	Name string `json:"name"`
	// Enabled is true when the configuration switches it on.
	Enabled bool `json:"enabled"`
	// Error says why the component could not be applied.
	Error string `json:"error,omitempty"`
}

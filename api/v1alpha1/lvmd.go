package v1alpha1

// LvmdCheck is `lvmd check FILE`'s answer: the file, whether it is valid, its device classes,
// every problem, and what was checked of the host.
type LvmdCheck struct {
	TypeMeta `json:",inline"`
	// File is the file checked.
	File string `json:"file"`
	// Valid is true when the file has no problem.
	Valid bool `json:"valid"`
	// DeviceClasses are the valid file's device classes by name; empty: storage is not
	// deployed.
	DeviceClasses []string `json:"deviceClasses"`
	// Problems are every problem found, in the file's order.
	Problems []LvmdProblem `json:"problems"`
	// Host says whether the device classes were checked against the host.
	Host LvmdHostCheck `json:"host"`
}

// LvmdProblem is one problem of an lvmd configuration.
type LvmdProblem struct {
	// Field is the YAML path (device-classes[1].spare-gb), empty for the file as a whole.
	Field string `json:"field,omitempty"`
	// Reason says what is wrong.
	Reason string `json:"reason"`
}

// LvmdHostCheck says whether the device classes were checked against the host: checked with
// the source of the volume groups, or not and why (skipped).
type LvmdHostCheck struct {
	// Checked is true when the host's volume groups were compared.
	Checked bool `json:"checked"`
	// Source says where the volume groups came from.
	Source string `json:"source,omitempty"`
	// Skipped says why the host was not checked.
	Skipped string `json:"skipped,omitempty"`
}

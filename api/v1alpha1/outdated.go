package v1alpha1

// BranchStatusList is `outdated`'s answer: per branch of a clone, what it records against
// what a rebase would pick today, in the order the branches were given.
type BranchStatusList struct {
	TypeMeta `json:",inline"`
	// Items are the branches' answers.
	Items []BranchStatus `json:"items"`
	// Outdated lists the branches with status "outdated" (a CI matrix reads it).
	Outdated []string `json:"outdated"`
	// Errors lists the branches with status "error".
	Errors []string `json:"errors"`
}

// BranchStatus is one branch's answer; each item of a BranchStatusList carries its own
// apiVersion and kind.
type BranchStatus struct {
	TypeMeta `json:",inline"`
	// Branch is the branch's name.
	Branch string `json:"branch"`
	// Commit is the commit read.
	Commit string `json:"commit,omitempty"`
	// OCP is the branch's OpenShift minor (release.base).
	OCP string `json:"ocp,omitempty"`
	// LVMS is the LVMS minor a run picks.
	LVMS string `json:"lvms,omitempty"`
	// RecordedFrom says where the current values come from: "lock" or "records".
	RecordedFrom string `json:"recordedFrom,omitempty"`
	// Bundle is the bundle version recorded and the newest.
	Bundle VersionPair `json:"bundle"`
	// Payload is the payload version recorded and the newest.
	Payload VersionPair `json:"payload"`
	// PayloadRule is the rule a run applies: "tree" (last_rebase.sh) or "newest".
	PayloadRule string `json:"payloadRule,omitempty"`
	// Signatures says what proves the branch's pins, as its lock records them: "verified",
	// "ci-signed-only", "unsigned" (a run with --allow-unsigned), "other-policy" (verified
	// under another policy than the one given) or "not-recorded".
	Signatures string `json:"signatures,omitempty"`
	// Unsigned lists the pins the lock records as unsigned ("<role> <image>@<digest>").
	Unsigned []string `json:"unsigned,omitempty"`
	// Status is "current", "outdated" or "error".
	Status string `json:"status"`
	// Reason says what lags, or why the branch could not be read.
	Reason string `json:"reason,omitempty"`
}

// VersionPair is a recorded value and the one a run would pick today.
type VersionPair struct {
	// Current is what the branch records.
	Current string `json:"current"`
	// Newest is what a run would pick today.
	Newest string `json:"newest"`
}

package v1alpha1

// VersionInfo is `version`'s answer (kind Version): what the binary was built from.
type VersionInfo struct {
	TypeMeta `json:",inline"`
	// Version is the stamped version, else the main module's, else "dev".
	Version string `json:"version"`
	// Revision is the VCS commit built from; empty when the toolchain recorded none.
	Revision string `json:"revision,omitempty"`
	// Modified is true when the tree built from had changes; false when the toolchain
	// recorded none.
	Modified bool `json:"modified"`
}

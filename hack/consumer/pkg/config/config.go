// Package config is the part of MicroShift's configuration the storage start-up reads.
package config

// Config is MicroShift's parsed and validated configuration (config.yaml plus drop-ins).
type Config struct {
	Storage Storage `json:"storage"`
}

// CSIStorageDriver is storage.driver: "", "lvms" or "none".
type CSIStorageDriver string

// OptionalCsiComponent is one entry of storage.optionalCsiComponents.
type OptionalCsiComponent string

// The values MicroShift declares.
const (
	CsiDriverUnset        CSIStorageDriver     = ""
	CsiDriverNone         CSIStorageDriver     = "none"
	CsiDriverLVMS         CSIStorageDriver     = "lvms"
	CsiComponentNone      OptionalCsiComponent = "none"
	CsiComponentSnapshot  OptionalCsiComponent = "snapshot-controller"
	CsiComponentNullAlias OptionalCsiComponent = ""
)

// Storage is the storage section, as MicroShift's pkg/config/storage.go declares it.
type Storage struct {
	Driver                CSIStorageDriver       `json:"driver,omitempty"`
	OptionalCSIComponents []OptionalCsiComponent `json:"optionalCsiComponents,omitempty"`
}

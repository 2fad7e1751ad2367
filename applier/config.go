package applier

import (
	"encoding/json"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/config"
)

// Storage drivers accepted in MicroShift's storage.driver.
const (
	DriverDefault = ""
	DriverLVMS    = "lvms"
	DriverNone    = "none"
)

// Optional CSI components accepted in storage.optionalCsiComponents.
const (
	ComponentSnapshotController = "snapshot-controller"
	ComponentSnapshotWebhook    = "snapshot-webhook"
	ComponentNone               = "none"
)

// StorageConfig is the storage section of MicroShift's config.yaml.
type StorageConfig struct {
	// Driver is "" or "lvms" (deploy LVMS / TopoLVM) or "none" (deploy nothing).
	Driver string `json:"driver,omitempty"`
	// OptionalCSIComponents selects the snapshot pieces; unset, [] and [""] all mean the era's
	// default, ["none"] means none.
	OptionalCSIComponents []string `json:"optionalCsiComponents,omitempty"`
}

// microshiftConfig is the part of config.yaml the applier reads; other sections belong to
// MicroShift and are ignored, but the storage section itself is decoded strictly.
type microshiftConfig struct {
	Storage json.RawMessage `json:"storage,omitempty"`
}

// MicroShift's configuration locations (pkg/config/files.go).
const (
	DefaultConfigFile   = "/etc/microshift/config.yaml"
	DefaultConfigDropIn = "/etc/microshift/config.d"
)

// LoadStorageConfig reads MicroShift's configuration as MicroShift does (pkg/config/files.go):
// configFile, then every *.yaml file under dropInDir in lexical walk order (subdirectories
// included), each merged into the result as an RFC 7386 JSON merge patch (maps merge, lists and
// scalars replace, null deletes); blank files are skipped and missing paths are no config. The
// storage section of the merged result is decoded strictly. Errors name the file.
func LoadStorageConfig(configFile, dropInDir string) (StorageConfig, error) {
	raw, name, err := config.Merged(configFile, dropInDir)
	if err != nil || raw == nil {
		return StorageConfig{}, err
	}
	return parseStorageConfig(name, raw)
}

// parseStorageConfig decodes the storage section of config.yaml content; name is used in errors.
func parseStorageConfig(name string, data []byte) (StorageConfig, error) {
	var top microshiftConfig
	if err := yaml.Unmarshal(data, &top); err != nil {
		return StorageConfig{}, fmt.Errorf("MicroShift config %s: %w", name, err)
	}
	var sc StorageConfig
	if len(top.Storage) == 0 || string(top.Storage) == "null" {
		return sc, nil
	}
	if err := yaml.UnmarshalStrict(top.Storage, &sc); err != nil {
		return StorageConfig{}, fmt.Errorf("MicroShift config %s: storage: %w", name, err)
	}
	return sc, nil
}

// Plan is what the configuration gates allow; it is computed before anything touches the API so
// that a bad configuration applies nothing.
type Plan struct {
	// Storage deploys the LVMS (or TopoLVM) component.
	Storage bool
	// SnapshotController and SnapshotWebhook deploy the CSI snapshot pieces.
	SnapshotController bool
	SnapshotWebhook    bool
	// Warnings are conditions worth a log line that do not stop the apply.
	Warnings []string
}

// gateInput is what the gates depend on besides the user's configuration.
type gateInput struct {
	Config StorageConfig
	// LvmdFilePresent is whether the user's lvmd file exists.
	LvmdFilePresent bool
	// WebhookShipped is whether the assets contain the snapshot validation webhook (4.14–4.17);
	// where it does, the default component set includes it, as it did in those releases.
	WebhookShipped bool
}

// decideGates decides which components to deploy. It fixes MicroShift's legacy quirks: an explicit
// [] and [""] mean the same as unset; "none" combined with anything else is an error rather than
// "disable all"; "snapshot-controller" alone deploys the controller (4.17 deployed only its RBAC);
// and driver "none" with an lvmd file present is reported instead of half-applying LVMS.
func decideGates(in gateInput) (Plan, error) {
	var p Plan
	switch in.Config.Driver {
	case DriverDefault, DriverLVMS:
		p.Storage = true
	case DriverNone:
		if in.LvmdFilePresent {
			p.Warnings = append(p.Warnings, "storage.driver is \"none\" but an lvmd config file exists; LVMS is not deployed and the file is ignored")
		}
	default:
		return Plan{}, fmt.Errorf("storage.driver: %q is not one of \"\", %q, %q", in.Config.Driver, DriverLVMS, DriverNone)
	}

	var comps []string
	for i, c := range in.Config.OptionalCSIComponents {
		switch c {
		case "":
			continue
		case ComponentSnapshotController, ComponentNone:
		case ComponentSnapshotWebhook:
			if !in.WebhookShipped {
				return Plan{}, fmt.Errorf("storage.optionalCsiComponents[%d]: %q is not shipped by these assets (removed in 4.18)", i, c)
			}
		default:
			return Plan{}, fmt.Errorf("storage.optionalCsiComponents[%d]: %q is not one of %q, %q, %q", i, c, ComponentSnapshotController, ComponentSnapshotWebhook, ComponentNone)
		}
		if !slices.Contains(comps, c) {
			comps = append(comps, c)
		}
	}
	switch {
	case len(comps) == 0:
		p.SnapshotController = true
		p.SnapshotWebhook = in.WebhookShipped
	case slices.Contains(comps, ComponentNone):
		if len(comps) > 1 {
			return Plan{}, fmt.Errorf("storage.optionalCsiComponents: %q cannot be combined with other components, got %q", ComponentNone, comps)
		}
	default:
		p.SnapshotController = slices.Contains(comps, ComponentSnapshotController)
		p.SnapshotWebhook = slices.Contains(comps, ComponentSnapshotWebhook)
	}
	return p, nil
}

package applier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/lvmd"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/readfile"
)

// defaultSocketName is lvmd's gRPC socket when the configuration does not name one.
const defaultSocketName = "/run/lvmd/lvmd.socket"

// defaultVolumeGroup is the volume group chosen when several exist and no lvmd file is given.
const defaultVolumeGroup = "microshift"

// LvmdConfig is lvmd's configuration file (/etc/microshift/lvmd.yaml): every field of TopoLVM's
// lvmd Config (cmd/lvmd/app/config.go), which LVMS's vg-manager parses the runtime copy with.
// Field names and the absence of omitempty on the fields MicroShift has always had follow
// TopoLVM's types, so the canonical form matches what MicroShift rendered into the ConfigMap; the
// two later fields are omitted when unset for the same reason.
type LvmdConfig struct {
	SocketName            string                 `json:"socket-name"`
	DeviceClasses         []*DeviceClass         `json:"device-classes"`
	LvcreateOptionClasses []*LvcreateOptionClass `json:"lvcreate-option-classes,omitempty"`
	LVMCommandPrefix      []string               `json:"lvm-command-prefix,omitempty"`
}

// DeviceClass maps a storage class's device-class to an LVM volume group (TopoLVM's
// pkg/lvmd/types.DeviceClass).
type DeviceClass struct {
	Name            string          `json:"name"`
	VolumeGroup     string          `json:"volume-group"`
	Default         bool            `json:"default"`
	SpareGB         *uint64         `json:"spare-gb"`
	Stripe          *uint           `json:"stripe"`
	StripeSize      string          `json:"stripe-size"`
	LVCreateOptions []string        `json:"lvcreate-options"`
	Type            string          `json:"type"`
	ThinPool        *ThinPoolConfig `json:"thin-pool"`
}

// ThinPoolConfig configures the thin pool of a device class of type thin.
type ThinPoolConfig struct {
	Name               string  `json:"name"`
	OverprovisionRatio float64 `json:"overprovision-ratio"`
}

// LvcreateOptionClass is a named set of extra lvcreate arguments a StorageClass can select.
type LvcreateOptionClass struct {
	Name    string   `json:"name"`
	Options []string `json:"options"`
}

// Device class types accepted by lvmd; "" means thick.
const (
	TypeThick = "thick"
	TypeThin  = "thin"
)

// LvmdError is an invalid lvmd configuration. It fails the storage component only: Apply still
// applies the CSI snapshot controller, so MicroShift can log it and keep starting.
type LvmdError struct {
	// File is the lvmd file (or the name given to parseLvmdConfig).
	File string
	// Field is the offending field's path, such as device-classes[1].spare-gb; empty when the
	// file as a whole is wrong (empty, not YAML).
	Field string
	// Reason says what was expected.
	Reason string
}

func (e *LvmdError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("lvmd config %s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("lvmd config %s: %s: %s", e.File, e.Field, e.Reason)
}

// parseLvmdConfig strictly decodes an lvmd configuration: unknown or duplicate fields, wrong types and
// empty documents are errors (*LvmdError) naming the field path. It applies the socket default
// and validates the result. name is used in error messages (usually the file path). The error is
// the first problem; LvmdProblems lists them all.
func parseLvmdConfig(name string, data []byte) (*LvmdConfig, error) {
	cfg, problems := parseLvmd(name, data)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	return cfg, nil
}

// LvmdProblems checks an lvmd configuration as parseLvmdConfig does and returns every problem it
// finds, in file order by kind (syntax, unknown fields, types, then the rules lvmd enforces);
// none for a valid configuration, which is returned too.
func LvmdProblems(name string, data []byte) (*LvmdConfig, []*LvmdError) {
	return parseLvmd(name, data)
}

func parseLvmd(name string, data []byte) (*LvmdConfig, []*LvmdError) {
	fail := func(reason string) (*LvmdConfig, []*LvmdError) {
		return nil, []*LvmdError{{File: name, Reason: reason}}
	}
	if len(bytes.TrimSpace(assets.StripComments(data))) == 0 {
		return fail("file is empty; expected socket-name and device-classes")
	}
	if n, err := yamlDocuments(data); err != nil {
		return fail(err.Error())
	} else if n > 1 {
		// sigs.k8s.io/yaml, MicroShift and vg-manager read the first document only: the rest
		// would be ignored without a word.
		return fail(fmt.Sprintf("has %d YAML documents; lvmd reads only the first, so the others would be ignored: keep one document", n))
	}
	// YAMLToJSONStrict rejects duplicate keys. Wrong types and unknown fields are reported by
	// checkSchema, all of them, by their path with the list index (device-classes[1].colour); the
	// JSON decoder stops at the first and drops the index.
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fail(err.Error())
	}
	var generic any
	if err := json.Unmarshal(jsonData, &generic); err != nil {
		return fail(err.Error())
	}
	top, ok := generic.(map[string]any)
	if !ok {
		return fail(fmt.Sprintf("expected a mapping with socket-name and device-classes, got %s", lvmd.TypeName(generic)))
	}
	cfg := &LvmdConfig{}
	var problems []*LvmdError
	for _, p := range lvmd.Check(top) {
		problems = append(problems, &LvmdError{Field: p.Field, Reason: p.Reason})
	}
	decodeErr := json.Unmarshal(jsonData, cfg)
	if len(problems) == 0 && decodeErr != nil {
		problems = append(problems, &LvmdError{Reason: decodeErr.Error()})
	}
	if len(problems) == 0 {
		if cfg.SocketName == "" {
			cfg.SocketName = defaultSocketName
		}
		problems = cfg.validate()
	}
	for _, p := range problems {
		p.File = name
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return cfg, nil
}

// yamlDocuments counts the documents of data that hold more than comments.
func yamlDocuments(data []byte) (int, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(bytes.TrimSpace(assets.StripComments(doc))) > 0 {
			n++
		}
	}
}

// Validate checks the rules lvmd enforces at start-up, reporting the first offending field by its
// YAML path as an *LvmdError.
func (c *LvmdConfig) Validate() error {
	if problems := c.validate(); len(problems) > 0 {
		return problems[0]
	}
	return nil
}

// validate returns every rule the configuration breaks.
func (c *LvmdConfig) validate() []*LvmdError {
	var out []*LvmdError
	if !strings.HasPrefix(c.SocketName, "/") {
		out = append(out, &LvmdError{Field: "socket-name", Reason: fmt.Sprintf("%q must be an absolute path", c.SocketName)})
	}
	names := map[string]bool{}
	defaults := 0
	for i, dc := range c.DeviceClasses {
		field := fmt.Sprintf("device-classes[%d]", i)
		if dc == nil {
			out = append(out, &LvmdError{Field: field, Reason: "device class is null"})
			continue
		}
		if names[dc.Name] && dc.Name != "" {
			out = append(out, &LvmdError{Field: field + ".name", Reason: fmt.Sprintf("duplicate device class %q", dc.Name)})
		}
		names[dc.Name] = true
		if dc.Default {
			defaults++
		}
		out = append(out, dc.validate(field)...)
	}
	if len(c.DeviceClasses) > 0 && defaults != 1 {
		out = append(out, &LvmdError{Field: "device-classes", Reason: fmt.Sprintf("%d device classes have default: true; exactly one must", defaults)})
	}
	optNames := map[string]bool{}
	for i, oc := range c.LvcreateOptionClasses {
		field := fmt.Sprintf("lvcreate-option-classes[%d]", i)
		switch {
		case oc == nil:
			out = append(out, &LvmdError{Field: field, Reason: "option class is null"})
			continue
		case oc.Name == "":
			out = append(out, &LvmdError{Field: field + ".name", Reason: "must not be empty"})
		case optNames[oc.Name]:
			out = append(out, &LvmdError{Field: field + ".name", Reason: fmt.Sprintf("duplicate lvcreate option class %q", oc.Name)})
		}
		optNames[oc.Name] = true
	}
	return out
}

func (dc *DeviceClass) validate(field string) []*LvmdError {
	var out []*LvmdError
	add := func(f, reason string) { out = append(out, &LvmdError{Field: field + f, Reason: reason}) }
	if dc.Name == "" {
		add(".name", "must not be empty")
	}
	if dc.VolumeGroup == "" {
		add(".volume-group", fmt.Sprintf("must not be empty (device class %q)", dc.Name))
	}
	if dc.Stripe != nil && *dc.Stripe < 1 {
		add(".stripe", fmt.Sprintf("%d must be >= 1", *dc.Stripe))
	}
	switch dc.Type {
	case "", TypeThick:
		if dc.ThinPool != nil {
			add(".thin-pool", fmt.Sprintf("set on device class %q of type %q; only thin classes have a thin pool", dc.Name, typeOrThick(dc.Type)))
		}
	case TypeThin:
		switch {
		case dc.ThinPool == nil:
			add(".thin-pool", fmt.Sprintf("required for device class %q of type thin", dc.Name))
		case dc.ThinPool.Name == "":
			add(".thin-pool.name", "must not be empty")
		}
		if dc.ThinPool != nil && !(dc.ThinPool.OverprovisionRatio >= 1) {
			add(".thin-pool.overprovision-ratio", fmt.Sprintf("%v must be >= 1", dc.ThinPool.OverprovisionRatio))
		}
	default:
		add(".type", fmt.Sprintf("%q is not one of thick, thin", dc.Type))
	}
	return out
}

// DefaultDeviceClass returns the device class marked default, nil when there is none.
func (c *LvmdConfig) DefaultDeviceClass() *DeviceClass {
	for _, dc := range c.DeviceClasses {
		if dc != nil && dc.Default {
			return dc
		}
	}
	return nil
}

func typeOrThick(t string) string {
	if t == "" {
		return TypeThick
	}
	return t
}

// Enabled reports whether the configuration has any device class; without one storage is off.
func (c *LvmdConfig) Enabled() bool { return c != nil && len(c.DeviceClasses) > 0 }

// Canonical returns the deterministic YAML form of the configuration: sorted keys, unset fields as
// null. It is what the LVMS runtime copy contains and the body of the TopoLVM rendered form, so
// comments or reordering in the user's file never restart pods.
func (c *LvmdConfig) Canonical() ([]byte, error) {
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("marshalling lvmd config: %w", err)
	}
	return out, nil
}

// Rendered returns the form MicroShift puts in the TopoLVM-era ConfigMap and feeds to the
// pod-template checksum: the canonical YAML prefixed with "# <message>" when message is not
// empty. The message line is part of the checksum, as it always was, so switching between a
// user file and defaults for the same config still rolls the node pods exactly once.
func (c *LvmdConfig) Rendered(message string) ([]byte, error) {
	canon, err := c.Canonical()
	if err != nil || message == "" {
		return canon, err
	}
	return append([]byte("# "+message+"\n"), canon...), nil
}

// VolumeGroupLister lists the host's LVM volume groups.
type VolumeGroupLister interface {
	VolumeGroups(ctx context.Context) ([]string, error)
}

// VGSLister runs `vgs --readonly --options=name --noheadings`, as MicroShift does.
type VGSLister struct {
	// Path is the vgs binary; empty means "vgs" on PATH.
	Path string
}

// ErrNoLVM means the LVM tools are not installed, so storage cannot run on this host.
var ErrNoLVM = lvmd.ErrNoLVM

// VolumeGroups implements VolumeGroupLister.
func (v VGSLister) VolumeGroups(ctx context.Context) ([]string, error) {
	return lvmd.VolumeGroups(ctx, v.Path)
}

// StaticVolumeGroups is a VolumeGroupLister with a fixed answer, for tests and callers that
// already know the volume groups.
type StaticVolumeGroups []string

// VolumeGroups implements VolumeGroupLister.
func (s StaticVolumeGroups) VolumeGroups(context.Context) ([]string, error) {
	return slices.Clone(s), nil
}

// LvmdSource says where the lvmd configuration came from, for logs and the result.
type LvmdSource struct {
	// Path is the user file that was read, empty when defaults were used.
	Path string
	// Message is MicroShift's explanation of the choice ("Read from …", "No volume groups found", …).
	Message string
}

// defaultLvmd builds the configuration MicroShift uses without a user file, from the host's
// volume groups: one VG → use it; several → "microshift" if present; none or ambiguous → no
// device classes (storage disabled), with the message saying why.
func defaultLvmd(vgs []string) (*LvmdConfig, string) {
	cfg := &LvmdConfig{SocketName: defaultSocketName}
	var vg, msg string
	switch {
	case len(vgs) == 0:
		msg = "No volume groups found"
	case len(vgs) == 1:
		vg, msg = vgs[0], "Defaulting to the only available volume group"
	case slices.Contains(vgs, defaultVolumeGroup):
		vg, msg = defaultVolumeGroup, fmt.Sprintf("Found default volume group %q", defaultVolumeGroup)
	default:
		msg = "Multiple volume groups are available, but no configuration file was provided."
	}
	if vg != "" {
		cfg.DeviceClasses = []*DeviceClass{{Name: "default", VolumeGroup: vg, Default: true, SpareGB: ptr(uint64(0))}}
	}
	return cfg, msg
}

// loadLvmd reads the user's lvmd file if it exists, otherwise derives the defaults from the
// volume groups. A file that exists but cannot be read or parsed is an error, never a silent
// fallback to defaults.
func loadLvmd(ctx context.Context, path string, vgs VolumeGroupLister) (*LvmdConfig, LvmdSource, error) {
	data, err := ReadLvmdFile(path)
	switch {
	case err == nil:
		cfg, err := parseLvmdConfig(path, data)
		if err != nil {
			return nil, LvmdSource{Path: path}, err
		}
		return cfg, LvmdSource{Path: path, Message: "Read from " + path}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, LvmdSource{Path: path}, readLvmdError(path, err)
	}
	list, err := vgs.VolumeGroups(ctx)
	if err != nil {
		return nil, LvmdSource{}, fmt.Errorf("no lvmd config at %s and listing volume groups failed: %w", path, err)
	}
	cfg, msg := defaultLvmd(list)
	return cfg, LvmdSource{Message: msg}, nil
}

func ptr[T any](v T) *T { return &v }

// readLvmdError names the file in a read error, unless it is an *LvmdError (which does).
func readLvmdError(path string, err error) error {
	var le *LvmdError
	if errors.As(err, &le) {
		return err
	}
	return fmt.Errorf("reading lvmd config %s: %w", path, err)
}

// MaxLvmdFileSize caps the lvmd file the applier reads (ReadLvmdFile); a real one is a few
// hundred bytes.
const MaxLvmdFileSize = 1 << 20

// ReadLvmdFile reads an lvmd configuration file as Apply and WatchLvmd do: a regular file (or a
// symlink to one) of at most MaxLvmdFileSize bytes. A FIFO, device, socket or directory (checked
// without blocking) or a larger file is an *LvmdError saying what it is; a missing file's error
// matches fs.ErrNotExist.
func ReadLvmdFile(path string) ([]byte, error) {
	data, err := readfile.Host(path, MaxLvmdFileSize)
	var re *readfile.Error
	if errors.As(err, &re) {
		return nil, &LvmdError{File: path, Reason: re.Reason}
	}
	return data, err
}

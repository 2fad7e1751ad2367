package app

import "github.com/lvms-rebase/lvms-rebase/rebase/option"

// flagNames is the one table from the libraries' option names to this CLI's flags: library
// errors and hints name an option (option.OCP), and the user reads the flag that sets it
// (--ocp). A flag renamed or aliased changes here only.
var flagNames = map[option.Name]string{
	option.OCP:               "ocp",
	option.LVMS:              "lvms",
	option.LVMSBundle:        "lvms-bundle",
	option.Payload:           "payload",
	option.OCPRelease:        "ocp-release",
	option.MicroShiftDir:     "microshift-dir",
	option.SnapshotAssets:    "snapshot-assets",
	option.PRBody:            "pr-body",
	option.Commit:            "commit",
	option.Check:             "check",
	option.AllowBaseMismatch: "allow-base-mismatch",
	option.AllowPrerelease:   "allow-prerelease",
	option.AllowVersionSkew:  "allow-version-skew",
	option.AuthFile:          "authfile",
	option.CacheDir:          "cache-dir",
	option.InsecureRegistry:  "insecure-registry",
	option.MaxImageSize:      "max-image-size",
	option.SignaturePolicy:   "signature-policy",
	option.AllowUnsigned:     "allow-unsigned",
	option.SignatureStore:    "signature-store",
	option.Branches:          "branches",
	option.PRBodyDir:         "pr-body-dir",
	option.Arches:            "arch",
	option.IDMSFile:          "idms-file",
}

// flagName spells n as a flag: --ocp, or --ocp-release-aarch64 for a per-arch pin. An option
// missing from the table keeps its field name (flagnames_test proves none is missing).
func flagName(n option.Name) string {
	base, arch := n.Split()
	f, ok := flagNames[base]
	if !ok {
		return string(n)
	}
	if arch != "" {
		f += "-" + arch
	}
	return "--" + f
}

// useFlagNames makes library messages spell options as this CLI's flags; NewRootCommand calls
// it, so every run (and every test that builds the command) reads --ocp, not OCP.
func useFlagNames() { option.SetNamer(flagName) }

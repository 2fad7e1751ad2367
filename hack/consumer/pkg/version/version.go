// Package version models MicroShift's build variant (pkg/version).
package version

// Build variants.
const (
	BuildVariantRHEL      = "rhel"
	BuildVariantCommunity = "community"
)

// Info is the build information.
type Info struct {
	BuildVariant string
}

// buildVariant is set by MicroShift's linker flags; tests set it directly.
var buildVariant = BuildVariantRHEL

// Get returns the build information.
func Get() Info { return Info{BuildVariant: buildVariant} }

// SetBuildVariantForTest switches the variant (consumer tests only).
func SetBuildVariantForTest(v string) { buildVariant = v }

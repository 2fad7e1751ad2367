package lvmsrebase

import "embed"

// Kustomize holds the kustomize trees: base/<component> with MicroShift's hand-maintained
// objects and overlays/<component>/<era> that combine a base with the objects generated
// from the bundle and the payload. The era table (rebase/era) names the overlay per
// OpenShift minor; rebase/render lays this tree out next to the generated objects and
// builds it.
//
//go:embed base overlays
var Kustomize embed.FS

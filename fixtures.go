package lvmsrebase

import "embed"

// Fixtures holds the generated fixture tree (`make fixtures`): testdata/images/ (one OCI
// image layout per repository, catalog.json, README.md) and testdata/snapshot-assets/
// (snapshot-controller operator tarballs by commit). rebase/testregistry and
// `lvms-rebase dev-registry` serve it; use fs.Sub(Fixtures, "testdata") for the root
// those expect.
//
//go:embed testdata/images testdata/snapshot-assets
var Fixtures embed.FS

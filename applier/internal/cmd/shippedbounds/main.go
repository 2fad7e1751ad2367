// Command shippedbounds writes the applier's shipped_bounds.yaml: for every object the applier
// may delete as MicroShift's own from before the applier (eras.LegacyTopoLVMObjects,
// LVMSObjects, SnapshotWebhookObjects), the bounded fields (kube.BoundedFields) of each distinct
// way an era's assets ship it. Give it every asset tree to take the eras from — MicroShift
// checkouts' assets/ directories of each LVMS-era branch, the applier's fixtures and the
// rebase's golden trees — from the applier directory:
//
//	go run ./internal/cmd/shippedbounds testdata/eras/*/assets ../testdata/golden/*/assets \
//	    <microshift release-4.16>/assets <microshift release-4.18>/assets > shipped_bounds.yaml
//
// The output is sorted: the same trees give the same bytes.
package main

import (
	"fmt"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/assets"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/kube"
)

const header = `# The bounded fields of each object the applier may delete as MicroShift's own from before the
# applier, as each era's assets ship it (applier/shipped.go: boundsOf). Generated; do not edit:
#   go run ./internal/cmd/shippedbounds <asset trees of every era> > shipped_bounds.yaml
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: shippedbounds <assets dir>... > shipped_bounds.yaml")
		os.Exit(2)
	}
	var objs []*unstructured.Unstructured
	for _, dir := range os.Args[1:] {
		files, err := assets.Read(os.DirFS(dir))
		if err != nil {
			fail(fmt.Errorf("%s: %w", dir, err))
		}
		for _, f := range files {
			docs, err := assets.DecodeDocs(f.Path, f.Data)
			if err != nil {
				fail(fmt.Errorf("%s: %w", dir, err))
			}
			objs = append(objs, docs...)
		}
	}
	refs := slices.Concat(eras.LegacyTopoLVMObjects(), eras.LVMSObjects(), eras.SnapshotWebhookObjects())
	bounds, err := kube.ShippedBounds(objs, refs)
	if err != nil {
		fail(err)
	}
	out, err := yaml.Marshal(bounds)
	if err != nil {
		fail(err)
	}
	fmt.Print(header + string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shippedbounds:", err)
	os.Exit(1)
}

// Command genfixtures writes the deterministic fixture tree (OCI image layouts,
// snapshot-asset tarballs, catalog) that tests and hack/dev-registry serve.
// hack/update-fixtures.sh runs it into testdata/.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
)

func main() {
	out := flag.String("out", "testdata", "directory to write images/ and snapshot-assets/ into")
	filler := flag.Int64("filler-bytes", 0, "incompressible bytes added to every release payload (benchmarks only; never commit)")
	minors := flag.String("minors", "", "comma-separated minors to generate (default: all)")
	flag.Parse()
	opts := fixtures.Options{FillerBytes: *filler}
	if *minors != "" {
		opts.Minors = strings.Split(*minors, ",")
	}
	if err := fixtures.Generate(*out, opts); err != nil {
		fmt.Fprintf(os.Stderr, "genfixtures: %v\n", err)
		os.Exit(1)
	}
}

// Command lvms-rebase refreshes MicroShift's embedded LVMS / TopoLVM and CSI snapshot
// controller assets from an LVMS operator bundle and an OCP release payload.
package main

import (
	"os"

	"github.com/lvms-rebase/lvms-rebase/cmd/lvms-rebase/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], app.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}

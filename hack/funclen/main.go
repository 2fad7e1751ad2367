// Command funclen fails when a non-test function of a module is longer than the style
// rule's limit (internal/funclen). `make verify` runs it through hack/verify-funclen.sh.
//
//	go run ./hack/funclen [-max 80] [-exclude dir,dir] [root]
//
// Without -exclude, the root module's exclusions apply when root is the module root.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/funclen"
)

func main() {
	max := flag.Int("max", funclen.Limit, "longest allowed function, in lines")
	exclude := flag.String("exclude", strings.Join(funclen.RootExcluded, ","),
		"comma-separated directories under root not to check")
	flag.Parse()
	root := "."
	if flag.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "usage: funclen [-max N] [-exclude dir,dir] [root]")
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		root = flag.Arg(0)
	}
	var ex []string
	if *exclude != "" {
		ex = strings.Split(*exclude, ",")
	}
	found, err := funclen.Check(root, funclen.Options{Max: *max, Exclude: ex})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	for _, f := range found {
		fmt.Printf("%s (limit %d)\n", f, *max)
	}
	if len(found) > 0 {
		fmt.Fprintf(os.Stderr, "%d function(s) over %d lines under %s; split them\n", len(found), *max, root)
		os.Exit(1)
	}
}

package components

import "github.com/lvms-rebase/lvms-rebase/applier"

// The consumer's only additions to the documented startCSIPlugin (its lines marked
// "consumer-only"): tests point the lvmd paths at a temporary directory and list volume groups
// without running vgs. MicroShift uses the applier's defaults, which are its own paths.
var (
	testOverrides      = func(*applier.Options) {}
	testWatchOverrides = func(*applier.WatchOptions) {}
)

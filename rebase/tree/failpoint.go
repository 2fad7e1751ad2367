//go:build lvmsrebase_failpoints

package tree

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Built only with -tags lvmsrebase_failpoints (the signal tests in cmd/lvms-rebase/app build
// lvms-rebase so; release binaries never carry it): with LVMS_REBASE_PAUSE_AT=<step prefix>,
// a write stops at the first step (see stepHook) with that prefix, prints
// "failpoint: paused at <step>" on stderr and waits until its context is done (the signal
// under test cancelled it) or a minute passed, so that a test can signal or kill a real
// lvms-rebase process at a precise point of the swap.
func init() {
	at := os.Getenv("LVMS_REBASE_PAUSE_AT")
	if at == "" {
		return
	}
	var once sync.Once
	stepHook = func(ctx context.Context, step string) {
		if !strings.HasPrefix(step, at) {
			return
		}
		once.Do(func() {
			fmt.Fprintf(os.Stderr, "failpoint: paused at %s\n", step)
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
			}
		})
	}
}

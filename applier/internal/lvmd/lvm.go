package lvmd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoLVM means the LVM tools are not installed, so storage cannot run on this host.
var ErrNoLVM = errors.New("LVM tools (vgs) not found")

// VolumeGroups runs `<vgs> --readonly --options=name --noheadings`, as MicroShift does; vgs is the
// binary ("vgs" on PATH when empty). ErrNoLVM means it is not installed.
func VolumeGroups(ctx context.Context, vgs string) ([]string, error) {
	if vgs == "" {
		vgs = "vgs"
	}
	path, err := exec.LookPath(vgs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoLVM, err)
	}
	out, err := exec.CommandContext(ctx, path, "--readonly", "--options=name", "--noheadings").Output()
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", path, err)
	}
	var names []string // nil, not empty, without volume groups (appending none keeps it nil)
	return append(names, strings.Fields(string(out))...), nil
}

// ThinPool is an LVM thin pool: a logical volume of a volume group.
type ThinPool struct{ VolumeGroup, Name string }

// ThinPools runs `lvs --readonly --noheadings --separator=, --options=vg_name,lv_name,lv_attr` and
// keeps the logical volumes whose attributes start with "t" (thin pool). ErrNoLVM means lvs is
// not installed.
func ThinPools(ctx context.Context) ([]ThinPool, error) {
	path, err := exec.LookPath("lvs")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoLVM, err)
	}
	out, err := exec.CommandContext(ctx, path, "--readonly", "--noheadings", "--separator=,", "--options=vg_name,lv_name,lv_attr").Output()
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", path, err)
	}
	return parseLVS(string(out)), nil
}

// parseLVS reads lvs' vg_name,lv_name,lv_attr lines and returns the thin pools.
func parseLVS(out string) []ThinPool {
	var pools []ThinPool
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) == 3 && strings.HasPrefix(f[2], "t") {
			pools = append(pools, ThinPool{VolumeGroup: f[0], Name: f[1]})
		}
	}
	return pools
}

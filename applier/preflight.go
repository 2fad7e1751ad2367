package applier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/lvmd"
)

// ThinPool is an LVM thin pool: a logical volume of a volume group.
type ThinPool struct{ VolumeGroup, Name string }

// ThinPoolLister is implemented by VolumeGroupListers that can also list the host's thin pools
// (VGSLister does, with lvs). The thin-pool half of the host check runs only with one.
type ThinPoolLister interface {
	ThinPools(ctx context.Context) ([]ThinPool, error)
}

// ThinPools implements ThinPoolLister: it runs `lvs --readonly --noheadings --separator=,
// --options=vg_name,lv_name,lv_attr` and keeps the logical volumes whose attributes start with
// "t" (thin pool). ErrNoLVM means lvs is not installed.
func (v VGSLister) ThinPools(ctx context.Context) ([]ThinPool, error) {
	pools, err := lvmd.ThinPools(ctx)
	if err != nil {
		return nil, err
	}
	var out []ThinPool
	for _, p := range pools {
		out = append(out, ThinPool(p))
	}
	return out, nil
}

// CheckLvmdHost checks every device class of cfg against the host: its volume group must exist,
// and, when host is also a ThinPoolLister, a thin class's pool must exist in that group. It
// returns every problem as an *LvmdError naming the device class, what is missing and what the
// host has (file is the lvmd file, for the errors). ErrNoLVM from host is returned as is: without
// LVM there is nothing to check against.
func CheckLvmdHost(ctx context.Context, file string, cfg *LvmdConfig, host VolumeGroupLister) ([]*LvmdError, error) {
	vgs, err := host.VolumeGroups(ctx)
	if err != nil {
		return nil, err
	}
	var pools []ThinPool
	pl, checkPools := host.(ThinPoolLister)
	if checkPools {
		if pools, err = pl.ThinPools(ctx); err != nil {
			return nil, fmt.Errorf("listing thin pools: %w", err)
		}
	}
	return hostProblems(file, cfg, vgs, pools, checkPools), nil
}

func hostProblems(file string, cfg *LvmdConfig, vgs []string, pools []ThinPool, checkPools bool) []*LvmdError {
	var out []*LvmdError
	have := strings.Join(vgs, ", ")
	if have == "" {
		have = "none"
	}
	for i, dc := range cfg.DeviceClasses {
		if dc == nil {
			continue
		}
		field := fmt.Sprintf("device-classes[%d]", i)
		if !slices.Contains(vgs, dc.VolumeGroup) {
			out = append(out, &LvmdError{File: file, Field: field + ".volume-group",
				Reason: fmt.Sprintf("device class %q: volume group %q does not exist on this host (volume groups: %s)", dc.Name, dc.VolumeGroup, have)})
			continue
		}
		if !checkPools || dc.Type != TypeThin || dc.ThinPool == nil {
			continue
		}
		if !slices.Contains(pools, ThinPool{VolumeGroup: dc.VolumeGroup, Name: dc.ThinPool.Name}) {
			var inVG []string
			for _, p := range pools {
				if p.VolumeGroup == dc.VolumeGroup {
					inVG = append(inVG, p.Name)
				}
			}
			there := strings.Join(inVG, ", ")
			if there == "" {
				there = "none"
			}
			out = append(out, &LvmdError{File: file, Field: field + ".thin-pool.name",
				Reason: fmt.Sprintf("device class %q: thin pool %q does not exist in volume group %q (thin pools there: %s)", dc.Name, dc.ThinPool.Name, dc.VolumeGroup, there)})
		}
	}
	return out
}

// joinProblems turns a problem list into one error (nil for none); errors.As still finds the
// first *LvmdError.
func joinProblems(problems []*LvmdError) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// preflight checks the user's lvmd configuration against the host before storage is applied
// (the volume groups were listed already; thin pools when the lister can). A device class the
// host cannot serve would make TopoLVM's node plugin crash-loop, so it fails the storage
// component instead, and kube.run makes that visible as an Event in the storage namespace.
func (pl *preparation) preflight(ctx context.Context, cfg *LvmdConfig, vgs []string) error {
	var pools []ThinPool
	lister, checkPools := pl.o.VolumeGroups.(ThinPoolLister)
	if checkPools {
		var err error
		if pools, err = lister.ThinPools(ctx); err != nil {
			checkPools = false
			pl.result.Warnings = append(pl.result.Warnings, "thin pools not checked against the host: "+err.Error())
		}
	}
	err := joinProblems(hostProblems(pl.o.LvmdPath, cfg, vgs, pools, checkPools))
	if err != nil {
		pl.preflightFailed = true
	}
	return err
}

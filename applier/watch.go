package applier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/watch"
)

// WatchOptions configures WatchLvmd. Every field has a default.
type WatchOptions struct {
	// LvmdPath is the user's lvmd config; default DefaultLvmdPath. Its directory must exist.
	LvmdPath string
	// RuntimeLvmdPath is the copy vg-manager hot-reloads; default DefaultRuntimeLvmdPath.
	RuntimeLvmdPath string
	// VolumeGroups is the host: every edit is checked against its volume groups (and thin
	// pools, when it is a ThinPoolLister), and it derives the defaults when the user file is
	// removed; default VGSLister{}.
	VolumeGroups VolumeGroupLister
	// Logger receives every sync and rejected edit; default slog.Default().
	Logger *slog.Logger
	// Debounce is how long the file must be quiet before it is read; default 500ms. Editors
	// write in several steps (truncate + write, or delete + re-create, or rename over).
	Debounce time.Duration
	// OnSync, when set, is called after every sync with its outcome.
	OnSync func(LvmdSync)
}

// LvmdSync is the outcome of one sync of the runtime copy.
type LvmdSync struct {
	// Source is where the configuration came from (the user file, or defaults).
	Source LvmdSource
	// Written is true when the runtime copy changed.
	Written bool
	// Err is why the runtime copy was left as it was (an invalid edit: an *LvmdError).
	Err error
}

// WatchLvmd keeps the LVMS runtime lvmd copy in sync with the user's file until ctx ends, as
// MicroShift's storage start-up does, for MicroShift to run in a goroutine next to Apply:
// vg-manager hot-reloads the copy. Changes are picked up from file-system events on the file's
// directory, debounced, and written atomically. A valid file is copied as written; an invalid
// edit is logged and the last good copy kept (an edit naming a volume group or thin pool the
// host lacks is invalid, as for Apply's host preflight); a removed file (for longer than
// Debounce — editors that delete and re-create are fine) is replaced by the defaults from the
// volume groups. It syncs once at start, returns nil when ctx ends, and an error only when the
// watch cannot be set up.
//
// The TopoLVM era (up to 4.16) reads lvmd config from a ConfigMap instead; there a changed file
// takes effect through the next Apply.
func WatchLvmd(ctx context.Context, opts WatchOptions) error {
	o := opts.withDefaults()
	return watch.File(ctx, watch.Options{Path: o.LvmdPath, What: "lvmd config", Debounce: o.Debounce, Logger: o.Logger}, o.sync)
}

func (o WatchOptions) withDefaults() WatchOptions {
	hostDefaults(&o.LvmdPath, &o.RuntimeLvmdPath, &o.VolumeGroups, &o.Logger)
	o.LvmdPath = filepath.Clean(o.LvmdPath)
	if o.Debounce <= 0 {
		o.Debounce = 500 * time.Millisecond
	}
	return o
}

// sync brings the runtime copy up to date and reports the outcome.
func (o WatchOptions) sync(ctx context.Context) {
	s := o.syncOnce(ctx)
	switch {
	case s.Err != nil:
		o.Logger.Error("lvmd config not applied; the runtime copy keeps the last good configuration", "path", o.LvmdPath, "error", s.Err)
	case s.Written:
		o.Logger.Info("lvmd runtime copy updated", "path", o.RuntimeLvmdPath, "source", s.Source.Message)
	}
	if o.OnSync != nil {
		o.OnSync(s)
	}
}

func (o WatchOptions) syncOnce(ctx context.Context) LvmdSync {
	data, err := ReadLvmdFile(o.LvmdPath)
	switch {
	case err == nil:
		src := LvmdSource{Path: o.LvmdPath, Message: "Read from " + o.LvmdPath}
		cfg, err := parseLvmdConfig(o.LvmdPath, data)
		if err == nil {
			err = o.checkHost(ctx, cfg)
		}
		if err != nil {
			return LvmdSync{Source: src, Err: err}
		}
		written, err := atomicfile.WriteFile(o.RuntimeLvmdPath, data, 0o644)
		return LvmdSync{Source: src, Written: written, Err: err}
	case !errors.Is(err, fs.ErrNotExist):
		return LvmdSync{Source: LvmdSource{Path: o.LvmdPath}, Err: readLvmdError(o.LvmdPath, err)}
	}
	vgs, err := o.VolumeGroups.VolumeGroups(ctx)
	if err != nil {
		return LvmdSync{Err: fmt.Errorf("lvmd config %s removed; listing volume groups for the defaults: %w", o.LvmdPath, err)}
	}
	cfg, msg := defaultLvmd(vgs)
	canon, err := cfg.Canonical()
	if err != nil {
		return LvmdSync{Source: LvmdSource{Message: msg}, Err: err}
	}
	written, err := atomicfile.WriteFile(o.RuntimeLvmdPath, canon, 0o600)
	return LvmdSync{Source: LvmdSource{Message: msg}, Written: written, Err: err}
}

// checkHost refuses an edit the host cannot serve, as Apply's preflight does at start-up: a
// device class whose volume group (or, with a ThinPoolLister, thin pool) is missing would make
// vg-manager fail on the reload, while the last good copy keeps serving. Without LVM installed
// storage does not run, so there is nothing to check against.
func (o WatchOptions) checkHost(ctx context.Context, cfg *LvmdConfig) error {
	problems, err := CheckLvmdHost(ctx, o.LvmdPath, cfg, o.VolumeGroups)
	switch {
	case errors.Is(err, ErrNoLVM):
		return nil
	case err != nil:
		return fmt.Errorf("lvmd config %s: checking it against the host: %w", o.LvmdPath, err)
	}
	return joinProblems(problems)
}

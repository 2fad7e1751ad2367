package rebase

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// Recorded is what a MicroShift tree records about its storage inputs now: from the lock
// file when it has one, else from its bundle record (last_rebase_lvms.sh, or
// last_lvms_rebase.sh up to 4.17) and its release JSON. `lvms-rebase outdated` compares it
// with what a run would pick; a run's PR body shows it as "before".
type Recorded struct {
	// From is "lock" or "records" (bundle record and release JSON).
	From string `json:"from"`
	// Base is release.base of release-x86_64.json; OCP is its minor (the run's --ocp).
	Base string `json:"base,omitempty"`
	OCP  string `json:"ocp,omitempty"`
	// LVMSMinor is the lock's LVMS choice, else the bundle tag's minor.
	LVMSMinor string `json:"lvmsMinor,omitempty"`
	// BundleRef is the bundle pull spec; Bundle its version (the tag), "" when none.
	BundleRef string `json:"bundleRef,omitempty"`
	Bundle    string `json:"bundle,omitempty"`
	// Payload is the payload version the storage assets were made from (the lock's), or
	// without a lock release.base, which MicroShift's own rebase keeps equal to last_rebase.sh.
	Payload string `json:"payload,omitempty"`
	// LastRebase are the pull specs of last_rebase.sh per arch (nil without one).
	LastRebase map[string]string `json:"-"`
}

// ReadRecorded reads what the tree fsys records (see Recorded). A tree without a lock and
// without a bundle record has an empty Bundle; an unreadable file is an error naming it.
func ReadRecorded(fsys fs.FS) (*Recorded, error) {
	r := &Recorded{From: "records"}
	data, err := fs.ReadFile(fsys, BaseFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BaseFile, err)
	}
	f, err := release.Read(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BaseFile, err)
	}
	r.Base, r.Payload = f.Base, f.Base
	if r.OCP, err = MinorOf(f.Base); err != nil {
		return nil, fmt.Errorf("%s release.base: %w", BaseFile, err)
	}
	if data, err = fs.ReadFile(fsys, LastRebaseFile); err == nil {
		if r.LastRebase, err = ParseLastRebase(data); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", LastRebaseFile, err)
	}
	if data, err = fs.ReadFile(fsys, lock.Path); err == nil {
		l, err := lock.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lock.Path, err)
		}
		r.From, r.BundleRef, r.Bundle, r.Payload = "lock", l.Bundle.Ref, l.Bundle.Version, l.PayloadVersion
		if l.LVMS != nil {
			r.LVMSMinor = l.LVMS.Minor
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", lock.Path, err)
	} else if _, r.BundleRef, err = recipe.ReadRecord(fsys, era.RecordNames()); err != nil {
		return nil, err
	}
	if r.Bundle == "" {
		r.Bundle = refVersion(r.BundleRef)
	}
	if r.LVMSMinor == "" && r.Bundle != "" {
		r.LVMSMinor, _ = MinorOf(strings.TrimPrefix(r.Bundle, "v"))
	}
	return r, nil
}

// refVersion is the tag of a pull spec (its digest when it has no tag).
func refVersion(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		if j := strings.LastIndex(ref[:i], ":"); j > strings.LastIndex(ref[:i], "/") {
			return ref[j+1 : i]
		}
		return ref[i+1:]
	}
	if j := strings.LastIndex(ref, ":"); j > strings.LastIndex(ref, "/") {
		return ref[j+1:]
	}
	return ""
}

// Package recorded reads what a MicroShift tree records about its storage inputs: the OpenShift
// release of its release JSON (release.base), the payloads MicroShift's own rebase used
// (last_rebase.sh), its LVMS bundle record and the lock file. A rebase takes its defaults from
// them and describes them as "before"; `lvms-rebase outdated` compares them with what a rebase
// would pick.
package recorded

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/shrecord"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// BaseFile is the release JSON whose release.base gives the tree's OpenShift minor.
var BaseFile = releasefile.RepoPath("x86_64")

// LastRebaseFile records the payloads MicroShift's own rebase.sh used.
const LastRebaseFile = "scripts/auto-rebase/last_rebase.sh"

// lastRebase is the command last_rebase.sh records: rebase.sh to <x86_64 release> <aarch64 release>.
var lastRebase = shrecord.Spec{Scripts: []string{"rebase.sh"}, Sub: "to"}

// ParseLastRebase reads MicroShift's last_rebase.sh as bash reads it (rebase/shrecord): its one
// executed `./scripts/auto-rebase/rebase.sh to "<x86_64 release>" "<aarch64 release>"`. It
// returns the pull spec per MicroShift arch.
func ParseLastRebase(data []byte) (map[string]string, error) {
	call, err := shrecord.Find(LastRebaseFile, data, lastRebase)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return nil, fmt.Errorf("%s: no `rebase.sh to <x86_64 release> <aarch64 release>` command (comments, echo arguments and here-documents do not count)", LastRebaseFile)
	}
	if len(call.Args) != 2 {
		return nil, fmt.Errorf("%s: line %d: rebase.sh to: expected an x86_64 and an aarch64 release pull spec, got %d argument(s)", LastRebaseFile, call.Line, len(call.Args))
	}
	return map[string]string{"x86_64": call.Args[0], "aarch64": call.Args[1]}, nil
}

// Payload rules: how a run picks its payloads, as the lock records them (payloadRule).
const (
	PayloadTree   = "tree"   // the pull specs of the tree's last_rebase.sh
	PayloadNewest = "newest" // the newest GA z of the minor common to every arch
	PayloadPinned = "pinned" // pinned by the caller (or by the lock, when it is checked)
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
	// Provenance is what the lock records about the signatures of its digests (nil without a
	// lock, or for a lock written before signatures were verified).
	Provenance *provenance.Report `json:"-"`
}

// Read reads what the tree fsys records (see Recorded). A tree without a lock and
// without a bundle record has an empty Bundle; an unreadable file is an error naming it.
func Read(fsys fs.FS) (*Recorded, error) {
	r := &Recorded{From: "records"}
	data, err := safefile.ReadFS(fsys, BaseFile, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BaseFile, err)
	}
	f, err := release.Read(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BaseFile, err)
	}
	r.Base, r.Payload = f.Base, f.Base
	if r.OCP, err = era.MinorOf(f.Base); err != nil {
		return nil, fmt.Errorf("%s release.base: %w", BaseFile, err)
	}
	if data, err = safefile.ReadFS(fsys, LastRebaseFile, 0); err == nil {
		if r.LastRebase, err = ParseLastRebase(data); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", LastRebaseFile, err)
	}
	if data, err = safefile.ReadFS(fsys, lock.Path, 0); err == nil {
		l, err := lock.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lock.Path, err)
		}
		r.From, r.BundleRef, r.Bundle, r.Payload = "lock", l.Bundle.Ref, l.Bundle.Version, l.PayloadVersion
		r.Provenance = l.Provenance
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
		r.LVMSMinor, _ = era.MinorOf(strings.TrimPrefix(r.Bundle, "v"))
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

// PayloadRuleDrift verifies the lock's payload rule against the tree: rule tree names
// last_rebase.sh and pins the payloads that file runs rebase.sh with now; rule newest pins
// the GA tags of the payload version; newest and pinned read no file. Older locks record no
// rule. A last_rebase.sh that cannot be read is an error, as in a run.
func PayloadRuleDrift(root string, l *lock.Lock) ([]string, error) {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	switch l.PayloadRule {
	case "":
		return nil, nil
	case PayloadTree:
		if l.PayloadSource != LastRebaseFile {
			add("payloadSource: the lock records %q, rule tree reads %s", l.PayloadSource, LastRebaseFile)
		}
		data, err := safefile.ReadIn(root, LastRebaseFile, 0)
		if errors.Is(err, fs.ErrNotExist) {
			add("payloadRule: the lock records tree, the tree has no %s", LastRebaseFile)
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		specs, err := ParseLastRebase(data)
		if err != nil {
			return nil, err
		}
		for _, p := range l.Payloads {
			if want := lock.Ref(specs[p.Arch], p.Digest); p.Ref != want {
				add("payloads[%s].ref: the lock records %s, %s gives %s", p.Arch, p.Ref, LastRebaseFile, want)
			}
		}
	default:
		if l.PayloadSource != "" {
			add("payloadSource: the lock records %q, rule %s reads no file", l.PayloadSource, l.PayloadRule)
		}
		for _, p := range l.Payloads {
			if l.PayloadRule == PayloadNewest && !strings.HasSuffix(p.Ref, ":"+p.Version+"-"+p.Arch) {
				add("payloads[%s].ref: the lock records %s, rule newest pins the GA tag %s-%s", p.Arch, p.Ref, p.Version, p.Arch)
			}
		}
	}
	return out, nil
}

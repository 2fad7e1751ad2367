package rebase

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/release"
)

// ErrUsage marks errors that are the caller's mistake but not about one option's value (a
// given --ocp that contradicts the tree's release.base); a mistake in one option's value is an
// *option.Error. IsUsage tells both. A file an option names that does not load is neither: it
// is an *option.PathError, bad input.
var ErrUsage = errors.New("usage")

// baseError is a release.base that is not a strict version: bad input in the tree (exit 1 in
// the CLI), never read as "no release JSON".
type baseError struct{ error }

func (e baseError) Unwrap() error { return e.error }

// IsUsage reports whether err is the caller's mistake: an *option.Error or ErrUsage.
func IsUsage(err error) bool {
	var oe *option.Error
	return errors.As(err, &oe) || errors.Is(err, ErrUsage)
}

// Payload rules (Options.Payload), as the lock records them (rebase/recorded).
const (
	PayloadTree   = recorded.PayloadTree
	PayloadNewest = recorded.PayloadNewest
	PayloadPinned = recorded.PayloadPinned
)

// treeBase reads release.base of the tree's recorded.BaseFile and its minor, parsed as strictly as
// --ocp (era.VersionMinor): "5", "v5.0.0" or "05.0.1" is an error naming the file and field.
func treeBase(root string) (base, minor string, err error) {
	data, err := safefile.ReadIn(root, recorded.BaseFile, 0)
	if err != nil {
		return "", "", err
	}
	f, err := release.Read(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", recorded.BaseFile, err)
	}
	if minor, err = era.VersionMinor(f.Base); err != nil {
		return f.Base, "", baseError{fmt.Errorf("%s: release.base %w", recorded.BaseFile, err)}
	}
	return f.Base, minor, nil
}

// chooseOCP returns the OpenShift minor of the run: given (--ocp) or, without it, the minor
// of the tree's release.base. A given minor that contradicts the tree is a usage error
// unless allowMismatch (a branch whose OCP rebase has not run yet); a release.base that is
// not a strict version is an error either way.
func chooseOCP(given, root string, allowMismatch bool) (string, error) {
	base, m, err := treeBase(root)
	if be := (baseError{}); errors.As(err, &be) {
		return "", err
	}
	if given == "" {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Present but not a readable release JSON (a FIFO, a link, not JSON): an error
			// of the tree naming the file (exit 1), not a missing flag.
			return "", err
		}
		if err != nil {
			return "", option.Errorf(option.OCP, "X.Y not given and the tree's OpenShift minor is unknown: %v (give %s, e.g. %[2]s 4.18)", err, option.OCP)
		}
		return m, nil
	}
	if err != nil {
		return given, nil // no release JSON: the images phase names the missing file
	}
	if m != given && !allowMismatch {
		return "", option.Errorf(option.OCP, "%[2]s differs from the tree's OpenShift %[3]s (release.base %[4]s in %[5]s); drop %[1]s to use the tree's, or pass %[6]s for a branch whose OCP rebase has not run yet",
			option.OCP, given, m, base, recorded.BaseFile, option.AllowBaseMismatch)
	}
	return given, nil
}

// choosePayloads applies the payload rule: pins win; else --payload newest; else the tree's
// last_rebase.sh when it exists (required with --payload tree). Tree pins go into
// o.Source.ReleaseRefs for the requested arches. It returns the rule and its source file.
func choosePayloads(o *Options) (rule, from string, err error) {
	if len(o.Source.ReleaseRefs) > 0 {
		return PayloadPinned, "", nil
	}
	switch o.Payload {
	case PayloadNewest:
		return PayloadNewest, "", nil
	case "", PayloadTree:
	default:
		return "", "", option.Errorf(option.Payload, "%q: expected tree or newest", o.Payload)
	}
	data, err := safefile.ReadIn(o.MicroShiftDir, recorded.LastRebaseFile, 0)
	if errors.Is(err, fs.ErrNotExist) && o.Payload == "" {
		return PayloadNewest, "", nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", option.Errorf(option.Payload, "tree: %v", err)
	}
	if err != nil {
		// The tree's record is broken (a FIFO, a link, too large): an error of the tree, not
		// of the command line.
		return "", "", fmt.Errorf("the payload rule tree reads %s: %w", recorded.LastRebaseFile, err)
	}
	specs, err := recorded.ParseLastRebase(data)
	if err != nil {
		return "", "", err
	}
	arches := o.Source.Arches
	if len(arches) == 0 {
		arches = source.DefaultArches
	}
	refs := map[string]string{}
	for _, a := range arches {
		if specs[a] == "" {
			return "", "", fmt.Errorf("%s names no %s release (it has x86_64 and aarch64); pin it with %s", recorded.LastRebaseFile, a, option.For(option.OCPRelease, a))
		}
		refs[a] = specs[a]
	}
	o.Source.ReleaseRefs = refs
	return PayloadTree, recorded.LastRebaseFile, nil
}

// readLock reads the tree's lock file; a tree without one has none (nil).
func readLock(root string) (*lock.Lock, error) {
	p := filepath.Join(root, filepath.FromSlash(lock.Path))
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	l, err := lock.Read(p)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// pinFromLock makes a run reproduce the lock's inputs: the bundle and payloads by digest
// (keeping their tags, which carry versions) and the snapshot-assets source.
func pinFromLock(o *Options, l *lock.Lock) error {
	if o.OCP == "" {
		o.OCP = l.OCP
	}
	if o.OCP != l.OCP {
		return fmt.Errorf("%s: %s %s differs from the lock file's ocp %s", option.Check, option.OCP, o.OCP, l.OCP)
	}
	if l.Bundle.Ref == "" || l.Bundle.Digest == "" {
		return fmt.Errorf("%s: lock file %s: bundle ref and digest are required", option.Check, lock.Path)
	}
	// The bundle is pinned, not its minor: the minor is the CSV's, and the lock's LVMS rule
	// is applied to it again (era.Locked), so an edited minor is drift, not a failed fetch.
	o.Source.BundleRef = l.Bundle.Ref + "@" + l.Bundle.Digest
	o.Source.ReleaseRefs = map[string]string{}
	var arches []string
	for _, p := range l.Payloads {
		if p.Ref == "" || p.Digest == "" {
			return fmt.Errorf("%s: lock file %s: payload %s: ref and digest are required", option.Check, lock.Path, p.Arch)
		}
		o.Source.ReleaseRefs[p.Arch] = p.Ref + "@" + p.Digest
		arches = append(arches, p.Arch)
	}
	// The lock lists payloads sorted by name; a run resolves (and reports) them in MicroShift's
	// order, as a run without --check does.
	slices.SortStableFunc(arches, arch.Compare)
	if given := slices.SortedStableFunc(slices.Values(o.Source.Arches), arch.Compare); len(given) > 0 && !slices.Equal(slices.Compact(given), arches) {
		return option.Errorf(option.Arches, "%s differs from the lock file's payload arches %s: %s checks what the lock records", strings.Join(given, ","), strings.Join(arches, ","), option.Check)
	}
	o.Source.Arches = arches
	if l.SnapshotAssets.Source != "" && o.SnapshotAssets == "" {
		o.SnapshotAssets = l.SnapshotAssets.Source
	}
	return nil
}

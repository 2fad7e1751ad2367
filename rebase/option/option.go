// Package option names a caller's options in library messages without knowing how the front
// end spells them. Libraries write option.OCP (an Options field), never a command-line flag;
// the CLI installs its spelling once with SetNamer, so a CLI user still reads "--ocp" while a Go
// caller of the library reads the field name. Keeping the spelling in one table in cmd/ is what
// lets a flag be renamed or aliased without touching library code.
package option

import (
	"fmt"
	"sync/atomic"
)

// Name is the name of an Options field (or of a per-arch pin, see For). Its String is what
// the installed Namer makes of it.
type Name string

// The options library messages refer to. A front end maps every one of them (All).
const (
	OCP               Name = "OCP"
	LVMS              Name = "LVMS"
	LVMSBundle        Name = "LVMSBundle"
	Payload           Name = "Payload"
	OCPRelease        Name = "OCPRelease"
	MicroShiftDir     Name = "MicroShiftDir"
	SnapshotAssets    Name = "SnapshotAssets"
	PRBody            Name = "PRBody"
	Commit            Name = "Commit"
	Check             Name = "Check"
	AllowBaseMismatch Name = "AllowBaseMismatch"
	AllowPrerelease   Name = "AllowPrerelease"
	AllowVersionSkew  Name = "AllowVersionSkew"
	AuthFile          Name = "AuthFile"
	CacheDir          Name = "CacheDir"
	InsecureRegistry  Name = "InsecureRegistry"
	MaxImageSize      Name = "MaxImageSize"
	SignaturePolicy   Name = "SignaturePolicy"
	AllowUnsigned     Name = "AllowUnsigned"
	SignatureStore    Name = "SignatureStore"
	Branches          Name = "Branches"
	PRBodyDir         Name = "PRBodyDir"
	Arches            Name = "Arches"
	IDMSFile          Name = "IDMSFile"
)

// All lists every Name above, so a front end's test can prove it spells each one.
var All = []Name{OCP, LVMS, LVMSBundle, Payload, OCPRelease, MicroShiftDir, SnapshotAssets, PRBody,
	Commit, Check, AllowBaseMismatch, AllowPrerelease, AllowVersionSkew, AuthFile, CacheDir,
	InsecureRegistry, MaxImageSize, SignaturePolicy, AllowUnsigned, SignatureStore, Branches, PRBodyDir, Arches, IDMSFile}

// archSep separates a Name from the arch it is pinned for (For).
const archSep = "/"

// For is the per-arch form of n (e.g. OCPRelease for aarch64); arch may be a placeholder such
// as "<arch>".
func For(n Name, arch string) Name { return n + archSep + Name(arch) }

// Split undoes For: the base Name and the arch ("" for a plain Name).
func (n Name) Split() (base Name, arch string) {
	for i := range len(n) {
		if n[i] == archSep[0] {
			return n[:i], string(n[i+1:])
		}
	}
	return n, ""
}

// Namer spells a Name for the user.
type Namer func(Name) string

var namer atomic.Pointer[Namer]

// SetNamer installs the front end's spelling; nil restores the default (the field name).
func SetNamer(f Namer) {
	if f == nil {
		namer.Store(nil)
		return
	}
	namer.Store(&f)
}

// String is n as the installed Namer spells it, or the Options field name ("OCPRelease[aarch64]"
// for a per-arch Name) when none is installed.
func (n Name) String() string {
	if f := namer.Load(); f != nil {
		return (*f)(n)
	}
	if base, arch := n.Split(); arch != "" {
		return string(base) + "[" + arch + "]"
	}
	return string(n)
}

// Error is a mistake in the value of one option, the caller's to fix: a front end reports it
// as a usage error (the CLI exits 2) and reads the option as it spells it. Libraries validate
// an option once, where they use it, and return an *Error; they never name a flag.
type Error struct {
	Option Name
	Err    error
}

// Error reads "<option> <what is wrong>", e.g. `--ocp "4.17.3": expected X.Y` once the CLI's
// Namer is installed.
func (e *Error) Error() string { return e.Option.String() + " " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error about n with the formatted message.
func Errorf(n Name, format string, a ...any) error {
	return &Error{Option: n, Err: fmt.Errorf(format, a...)}
}

// PathError is a file or directory an option names that cannot be used: absent, unreadable,
// not of the kind expected (a directory for a file, a FIFO, a device, a link to one), empty,
// over its size cap, or not parsing. Unlike *Error it is not a mistake in the option's value
// (a well-formed path) but bad input: a front end reports it as an error of the run (the CLI
// exits 1, as kubectl does for `-f missing`), naming the option; Err names the path.
type PathError struct {
	Option Name
	Path   string
	Err    error
}

// Error reads "<option> <what is wrong>", as *Error does.
func (e *PathError) Error() string { return e.Option.String() + " " + e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// Pathf returns a *PathError about path, named by n, with the formatted message (which names
// the path).
func Pathf(n Name, path, format string, a ...any) error {
	return &PathError{Option: n, Path: path, Err: fmt.Errorf(format, a...)}
}

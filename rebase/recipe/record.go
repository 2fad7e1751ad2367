package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/shrecord"
)

// RecordPath is the bundle record of 4.18 and later branches (last_rebase_lvms.sh); up to
// 4.17 MicroShift names it last_lvms_rebase.sh. RecordSpec says which one a branch uses.
var RecordPath = path.Join(Dir, "last_rebase_lvms.sh")

// RecordCommand is the command a bundle record runs: rebase_lvms.sh (4.18 on) or
// rebase-lvms.sh (4.15–4.17) with `to <bundle>`; it is read with rebase/shrecord, as bash
// reads it.
var RecordCommand = shrecord.Spec{Scripts: []string{"rebase_lvms.sh", "rebase-lvms.sh"}, Sub: "to"}

// RecordSpec names a branch's bundle record (from its era, rebase/era Records).
type RecordSpec struct {
	// Name is the record (under Dir) a tree without any record gets.
	Name string
	// Script is the command a new record calls; an existing record keeps its own.
	Script string
	// Known are every name a record may have in any era, newest first (era.RecordNames).
	Known []string
}

// Records returns the bundle record files to write for a run on bundleRef (path relative to
// the root → content). A tree keeps its own record: every known record name it has is
// updated in place — only the arguments of the `to` command bash runs change; its '#!' line,
// script path, comments (whatever their encoding) and other lines stay byte for byte — so a
// 4.17 tree's last_lvms_rebase.sh is updated and no last_rebase_lvms.sh is added, and
// 4.18–4.20 trees, which carry both names, get both updated to the same bundle (the old one
// would otherwise keep naming a stale bundle). Only a tree with no record gets spec.Name, in
// MicroShift's format:
//
//	#!/bin/bash -x
//	./scripts/auto-rebase/rebase_lvms.sh to "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4"
//
// An existing record that bash would not run as exactly one such command (it does not parse,
// it runs two, or none) is an error naming it, and its line when there is one.
func Records(fsys fs.FS, spec RecordSpec, bundleRef string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range spec.Known {
		p := path.Join(Dir, name)
		data, err := safefile.ReadFS(fsys, p, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		call, err := shrecord.Find(p, data, RecordCommand)
		if err != nil {
			return nil, err
		}
		if call == nil {
			return nil, fmt.Errorf("%s: bash would run no `%s to <bundle>` command: write one, or remove the file, so that a run can update it", p, path.Base(spec.Script))
		}
		if out[p], err = call.Rewrite(p, data, RecordCommand, bundleRef); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		q, err := shrecord.Quote(bundleRef)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(Dir, spec.Name), err)
		}
		out[path.Join(Dir, spec.Name)] = []byte(fmt.Sprintf("#!/bin/bash -x\n%s to %s\n", spec.Script, q))
	}
	return out, nil
}

// ParseRecord returns the bundle pull spec a record names (`<script> to "<bundle>"`).
func ParseRecord(name string, data []byte) (string, error) {
	call, err := shrecord.Find(name, data, RecordCommand)
	if err != nil {
		return "", err
	}
	if call == nil || len(call.Args) != 1 {
		return "", fmt.Errorf("%s: expected one `rebase_lvms.sh to <bundle>` command", name)
	}
	return call.Args[0], nil
}

// ReadRecord finds the tree's bundle record (the first of known it has) and returns its
// path and the bundle it names; "" and no error when the tree has none.
func ReadRecord(fsys fs.FS, known []string) (p, bundleRef string, err error) {
	for _, name := range known {
		p = path.Join(Dir, name)
		data, err := safefile.ReadFS(fsys, p, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return p, "", fmt.Errorf("reading %s: %w", p, err)
		}
		ref, err := ParseRecord(p, data)
		return p, ref, err
	}
	return "", "", nil
}

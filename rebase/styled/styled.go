// Package styled renders the era's overlays into the files a MicroShift checkout gets, each
// in the checkout's style: a file whose objects already mean the same keeps its bytes; a
// changed one keeps the formatting of the file it replaces, or of its upstream source (the
// snapshot-controller operator's asset) when the checkout has none, as MicroShift's own
// rebase.sh copies it. The LVMS overlay needs only the bundle, so it is rendered and styled on
// its own (LVMS), ahead of the snapshot overlay, and joined with it by Tree.
package styled

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/keepstyle"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
)

// Part is a rendered overlay with each file already styled after the checkout's.
type Part struct {
	Part   *render.Part
	styled map[string]file
}

// file is one rendered file and what styling made of it.
type file struct {
	data, styled []byte
	err          error
}

// LVMS renders the LVMS overlay of e for objects (the bundle's translation) and styles its
// files after those of the checkout at root.
func LVMS(root string, e era.Era, kustomize fs.FS, objects []*unstructured.Unstructured) (*Part, error) {
	part, err := render.RenderPart(render.Input{Era: e, Kustomize: kustomize, LVMS: objects}, render.LVMSPart)
	if err != nil {
		return nil, err
	}
	out := &Part{Part: part, styled: make(map[string]file, len(part.Files))}
	for _, f := range part.Files {
		styled, err := keep(root, f, nil)
		out.styled[f.Path] = file{data: f.Data, styled: styled, err: err}
	}
	return out, nil
}

// Tree is every rendered file, styled, with the directories the render manages and the
// release placeholders the files carry.
type Tree struct {
	Files   map[string][]byte
	Managed []string
	Images  []render.ImageUse
}

// Render renders the snapshot overlay of e for the translated snapshot assets, joins it with
// the LVMS part and styles every file after the checkout at root.
func Render(root string, e era.Era, kustomize fs.FS, lvms *Part, snap *snapshot.Result, assets *snapshot.Assets) (*Tree, error) {
	in := render.Input{Era: e, Kustomize: kustomize, Snapshot: snapshotObjects(snap)}
	part, err := render.RenderPart(in, render.SnapshotPart)
	if err != nil {
		return nil, err
	}
	out, err := render.Join(e, snapshotAggregates(snap), lvms.Part, part)
	if err != nil {
		return nil, err
	}
	bases, err := upstreamBases(snap, assets)
	if err != nil {
		return nil, err
	}
	t := &Tree{Files: make(map[string][]byte, len(out.Files)), Managed: out.ManagedDirs, Images: out.Images}
	for _, f := range out.Files {
		if s, ok := lvms.styled[f.Path]; ok && bytes.Equal(s.data, f.Data) {
			t.Files[f.Path], err = s.styled, s.err
		} else {
			t.Files[f.Path], err = keep(root, f, bases[f.Path])
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// keep is f in the style of the checkout's file at its path, else of base. A file that is not
// UTF-8 is refused: keepstyle cannot parse it, and would return f as rendered, dropping the
// person's comment without a word.
func keep(root string, f render.File, base []byte) ([]byte, error) {
	cur, err := safefile.ReadIn(root, f.Path, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur = base
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", f.Path, err)
	}
	if err := strictyaml.UTF8(cur); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return keepstyle.Apply(cur, f.Data), nil
}

// snapshotObjects are the translated snapshot objects (none without a translation).
func snapshotObjects(s *snapshot.Result) []*unstructured.Unstructured {
	if s == nil {
		return nil
	}
	return s.Objects
}

// snapshotAggregates turns the snapshot translation's kept multi-document files into render
// aggregates.
func snapshotAggregates(s *snapshot.Result) []render.Aggregate {
	if s == nil {
		return nil
	}
	var out []render.Aggregate
	for _, a := range s.Aggregates {
		ra := render.Aggregate{Path: path.Join(render.SnapshotDir, a.File)}
		for _, i := range a.Members {
			o := s.Objects[i]
			ra.Members = append(ra.Members, render.ObjRef{Kind: o.GetKind(), Name: o.GetName(), Only: s.Origins[i].AggregateOnly})
		}
		out = append(out, ra)
	}
	return out
}

// upstreamBases maps each snapshot asset file to the operator file (or document of it) it
// comes from.
func upstreamBases(s *snapshot.Result, a *snapshot.Assets) (map[string][]byte, error) {
	out := map[string][]byte{}
	if s == nil || a == nil {
		return out, nil
	}
	for _, ag := range s.Aggregates {
		out[path.Join(render.SnapshotDir, ag.File)] = a.Files[ag.Source]
	}
	for _, o := range s.Origins {
		doc, err := keepstyle.Document(a.Files[o.Source], o.Doc)
		if err != nil {
			return nil, fmt.Errorf("snapshot assets %s: %s: %w", a.Source, o.Source, err)
		}
		out[path.Join(render.SnapshotDir, o.File)] = doc
	}
	return out, nil
}

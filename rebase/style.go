package rebase

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/keepstyle"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// render records the tree the payload lane rendered (styled.Render): the era's overlays as
// files to write, each in the checkout's style, and the directories the run manages.
func (r *runner) render(context.Context) error {
	t, err := r.lanes.tree.Wait()
	if err != nil {
		return err
	}
	maps.Copy(r.files, t.Files)
	r.managed = t.Managed
	r.result.ImageUses = t.Images
	return nil
}

// records adds the branch's bundle record (last_rebase_lvms.sh, or last_lvms_rebase.sh up
// to 4.17) to files and returns the recipe files to write: the entries of the component
// directories whose file sets the run changes. A file the tree ships that the run would not
// write stops it unless the era declares its removal (era.Retired).
func (r *runner) records(files map[string][]byte) (map[string][]byte, error) {
	root := r.opts.MicroShiftDir
	recs, err := recipe.Records(os.DirFS(root), r.recordSpec(), r.recordRef())
	if err != nil {
		return nil, err
	}
	r.recordPaths = slices.Sorted(maps.Keys(recs))
	for p, d := range recs {
		files[p] = d
	}
	before, after := map[string][]string{}, map[string][]string{}
	for _, c := range recipe.Components {
		if before[c.Dir], err = recipe.ReadDirNames(root, c.Dir); err != nil {
			return nil, err
		}
		prefix := "assets/" + c.Dir + "/"
		for p := range files {
			if strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
				after[c.Dir] = append(after[c.Dir], p[len(prefix):])
			}
		}
		sort.Strings(after[c.Dir])
	}
	if err := r.checkRetired(before, after); err != nil {
		return nil, err
	}
	res, err := recipe.Reconcile(root, recipe.RecipeFiles, recipe.Components, before, after)
	if err != nil {
		return nil, err
	}
	r.result.RecipeChanges = res.Changes
	for _, w := range res.Warnings {
		r.warn(w)
	}
	return res.Files, nil
}

// recordSpec names the era's bundle record.
func (r *runner) recordSpec() recipe.RecordSpec {
	return recipe.RecordSpec{Name: r.era.Records.Record, Script: r.era.Records.Script, Known: era.RecordNames()}
}

// recordRef is the bundle pull spec the record names: the tag MicroShift records, or the
// digest when the bundle was pinned by digest only.
func (r *runner) recordRef() string {
	b := r.result.Resolution.Bundle
	ref := b.Ref
	if i := strings.Index(ref, "@"); i >= 0 && source.Repository(ref[:i]) != ref[:i] {
		ref = ref[:i] // tag and digest (a --check pin): MicroShift records the tag
	}
	if source.Repository(ref) == ref && b.Digest != "" && !strings.Contains(ref, "@") {
		ref += "@" + b.Digest // pinned by digest only: the record names the digest
	}
	return ref
}

// checkRetired lets a run remove a component file the tree ships only when the era declares
// its removal, with the reason (listed in Result.Retired); any other file the run would drop
// stops it, since the branch's start-up code may read it by name.
func (r *runner) checkRetired(before, after map[string][]string) error {
	var undeclared []string
	for _, c := range recipe.Components {
		keep := set(after[c.Dir])
		for _, name := range before[c.Dir] {
			if keep[name] {
				continue
			}
			p := "assets/" + c.Dir + "/" + name
			if ret, ok := era.RetiredFor(r.era.Retired, c.Dir, name); ok {
				r.result.Retired = append(r.result.Retired, RetiredFile{Path: p, Why: ret.Why})
				continue
			}
			undeclared = append(undeclared, p)
		}
	}
	if len(undeclared) > 0 {
		return fmt.Errorf("the tree ships %s, which era %s/%s does not write and does not declare retired (rebase/era Retired); the branch's files are the authority: add the file to the era's overlay or declare its removal with the reason",
			strings.Join(undeclared, ", "), r.era.OCPEra, r.era.Name)
	}
	return nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// classify splits the changed files into changes of meaning and changes of
// formatting only (same documents once decoded).
func classify(root string, changes *tree.Changes, files map[string][]byte) (semantic, formatting []string, err error) {
	for _, p := range changes.Change {
		cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if isData(p) && keepstyle.Equal(cur, files[p]) {
			formatting = append(formatting, p)
		} else {
			semantic = append(semantic, p)
		}
	}
	return semantic, formatting, nil
}

// isData reports whether a path holds YAML or JSON documents (not a script).
func isData(p string) bool {
	ext := path.Ext(p)
	return ext == ".yaml" || ext == ".yml" || ext == ".json"
}

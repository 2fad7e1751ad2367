package rebase

import (
	"path"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/arch"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// treeScope is every path a rebase may write into a MicroShift tree, whatever the era: the
// component directories it manages, the release JSON of each architecture, the lock, the
// bundle records and the recipes under every name a branch gives them. Recovery acts only on
// these paths (a journal naming another is refused), and a write of any other is refused
// before it starts, so that whatever a run writes, the next one can recover.
func treeScope() tree.Scope {
	s := tree.Scope{Dirs: []string{render.SnapshotDir, render.LVMSDir}, Files: []string{lock.Path}}
	for _, a := range arch.Known() {
		s.Files = append(s.Files, releasefile.RepoPath(a))
	}
	for _, name := range append(era.RecordNames(), recipe.RecipeFiles...) {
		s.Files = append(s.Files, path.Join(recipe.Dir, name))
	}
	return s
}

// checkOutputs refuses an output of the run that a write to the tree at root would replace
// or remove — a --cache-dir inside a managed directory (every write removed the cache's files
// as files the render lacks), a --pr-body naming the lock or a record (written over it right
// after the swap) — before any work. A cache elsewhere in the checkout, even one named like a
// work directory, is fine: recovery leaves what it cannot prove its own alone.
func checkOutputs(root string, opts Options) error {
	cache := opts.Source.CacheDir
	if cache == "" {
		var err error
		if cache, err = source.DefaultCacheDir(); err != nil {
			return nil // source.New reports it
		}
	}
	for _, out := range []struct {
		name option.Name
		path string
	}{{option.CacheDir, cache}, {option.PRBody, opts.PRBody}} {
		if out.path == "" {
			continue
		}
		rel, held, err := treeScope().Holds(root, out.path)
		if err != nil {
			return option.Errorf(out.name, "%s: %w", out.path, err)
		}
		if held {
			return option.Errorf(out.name, "%s is %s in the MicroShift tree, which every write replaces or removes; put it outside the managed directories and files (%s)",
				out.path, rel, treeScope())
		}
	}
	return nil
}

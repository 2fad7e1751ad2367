package rebase

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/styled"
)

// recordsOut is the records step's output: every file the run writes (the rendered tree, the
// release JSONs, the branch's bundle records, the lock, the recipes) and the directories it
// manages, with what the records say.
type recordsOut struct {
	files   map[string][]byte
	managed []string
	// recordPaths are the bundle records the run writes (the branch's own names).
	recordPaths   []string
	recipeChanges []recipe.Change
	retired       []RetiredFile
	lock          *lock.Lock
}

// records adds to the rendered tree and the release JSONs the branch's bundle records, the
// lock file and MicroShift's asset recipes.
func (r *run) records(_ context.Context, s *graph.Step, b resolved, p fetched, pv proven, t *styled.Tree, sn snapshotted) (recordsOut, error) {
	im := pv.im
	out := recordsOut{files: maps.Clone(t.Files), managed: t.Managed}
	maps.Copy(out.files, im.files)
	res := r.joined(b, p)
	recipes, err := r.recipes(s, &out, b.era, res)
	if err != nil {
		return out, err
	}
	out.lock = r.buildLock(out.files, b, p, im, sn)
	if rep := pv.report; rep != nil {
		lp := *rep
		lp.PolicyFile = "" // a path of this machine
		out.lock.Provenance = &lp
	}
	data, err := out.lock.Marshal()
	if err != nil {
		return out, fmt.Errorf("encoding the lock file: %w", err)
	}
	out.files[lock.Path] = data
	// The recipes are MicroShift's files that other rebases edit too: written, not locked.
	maps.Copy(out.files, recipes)
	return out, nil
}

// recipes adds the branch's bundle record (last_rebase_lvms.sh, or last_lvms_rebase.sh up to
// 4.17) to the files and returns the recipe files to write: the entries of the component
// directories whose file sets the run changes. A file the tree ships that the run would not
// write stops it unless the era declares its removal (era.Retired).
func (r *run) recipes(s *graph.Step, out *recordsOut, e era.Era, res *source.Resolution) (map[string][]byte, error) {
	root := r.opts.MicroShiftDir
	spec := recipe.RecordSpec{Name: e.Records.Record, Script: e.Records.Script, Known: era.RecordNames()}
	recs, err := recipe.Records(safefile.FS(root), spec, recordRef(res.Bundle))
	if err != nil {
		return nil, err
	}
	out.recordPaths = slices.Sorted(maps.Keys(recs))
	maps.Copy(out.files, recs)
	before, after := map[string][]string{}, map[string][]string{}
	for _, c := range recipe.Components {
		if before[c.Dir], err = recipe.ReadDirNames(root, c.Dir); err != nil {
			return nil, err
		}
		prefix := "assets/" + c.Dir + "/"
		for p := range out.files {
			if strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
				after[c.Dir] = append(after[c.Dir], p[len(prefix):])
			}
		}
		sort.Strings(after[c.Dir])
	}
	if out.retired, err = checkRetired(e, before, after); err != nil {
		return nil, err
	}
	rec, err := recipe.Reconcile(root, recipe.RecipeFiles, recipe.Components, before, after)
	if err != nil {
		return nil, err
	}
	out.recipeChanges = rec.Changes
	for _, w := range rec.Warnings {
		s.Warn(w)
	}
	return rec.Files, nil
}

// recordRef is the bundle pull spec the record names: the tag MicroShift records, or the
// digest when the bundle was pinned by digest only.
func recordRef(b source.BundleRef) string {
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
// its removal, with the reason; any other file the run would drop stops it, since the
// branch's start-up code may read it by name.
func checkRetired(e era.Era, before, after map[string][]string) ([]RetiredFile, error) {
	var retired []RetiredFile
	var undeclared []string
	for _, c := range recipe.Components {
		for _, name := range before[c.Dir] {
			if slices.Contains(after[c.Dir], name) {
				continue
			}
			p := "assets/" + c.Dir + "/" + name
			if ret, ok := era.RetiredFor(e.Retired, c.Dir, name); ok {
				retired = append(retired, RetiredFile{Path: p, Why: ret.Why})
				continue
			}
			undeclared = append(undeclared, p)
		}
	}
	if len(undeclared) > 0 {
		return nil, fmt.Errorf("the tree ships %s, which era %s/%s does not write and does not declare retired (rebase/era Retired); the branch's files are the authority: add the file to the era's overlay or declare its removal with the reason",
			strings.Join(undeclared, ", "), e.OCPEra, e.Name)
	}
	return retired, nil
}

// buildLock is the lock file of the run's inputs and of files.
func (r *run) buildLock(files map[string][]byte, b resolved, p fetched, im imaged, sn snapshotted) *lock.Lock {
	res := r.joined(b, p)
	l := lock.New()
	l.ToolVersion = r.opts.ToolVersion
	l.OCP = r.opts.OCP
	l.Era = b.era.Name
	l.LVMS = &lock.LVMS{Minor: b.choice.Minor, Rule: b.choice.Rule, Reason: b.choice.Reason}
	l.PayloadRule, l.PayloadSource = res.PayloadRule, r.payloadSource
	l.PayloadVersion = p.version
	l.Bundle = lock.Image{
		Ref:     lock.Ref(res.Bundle.Ref, res.Bundle.Digest),
		Digest:  res.Bundle.Digest,
		Version: res.Bundle.Version,
	}
	// A URL source is recorded without credentials: the lock is committed and shared.
	src := r.opts.SnapshotAssets
	if strings.Contains(src, "://") {
		src = redact.Strip(src)
	}
	l.SnapshotAssets = lock.SnapshotAssets{Source: src, Commit: p.commit}
	if sn.assets != nil {
		l.SnapshotAssets.SHA256 = sn.assets.Digest()
		for _, d := range sn.assets.Digests() {
			l.SnapshotAssets.Files = append(l.SnapshotAssets.Files, lock.File{Path: d.Path, SHA256: d.SHA256})
		}
	}
	for _, pl := range res.Payloads {
		l.Payloads = append(l.Payloads, lock.Payload{Arch: pl.Arch, Ref: lock.Ref(pl.Ref, pl.Digest), Digest: pl.Digest, Version: pl.Version})
	}
	l.Images = im.lock
	l.SetFiles(files)
	return l
}

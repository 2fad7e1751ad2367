// Package prbody writes the markdown pull-request body of a rebase (--pr-body): versions and
// image digests before and after, the provenance of every digest (which key signed it for
// which identity), RBAC and CRD changes with a security review, what the bundle
// brought that MicroShift has not decided on, the files, and every warning verbatim. It reads
// only what it is given; the rebase decides what happened.
package prbody

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/atomicfile"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// Input is what a pull-request body describes: the versions and files before and after, and
// what the run found on the way.
type Input struct {
	OldVersion, NewVersion string // bundle tags
	OldPayload, NewPayload string
	Changes                *tree.Changes
	Before, After          map[string][]byte // changed and removed paths only
	Undeclared             []bundle.Image
	Excluded               []bundle.Excluded
	Recipes                []recipe.Change
	Semantic, Formatting   []string
	// ImageUses are the release placeholders of the shipped files; RBAC the review of the
	// RBAC change; Warnings every warning of the run, in order.
	ImageUses []render.ImageUse
	Arches    []string // the architectures whose release JSONs the run wrote
	RBAC      *review.RBAC
	Warnings  []string
	// Provenance is what proved each digest (nil: the run verified none, a --check of an old
	// lock; the section says so).
	Provenance *provenance.Report
	// Uncommitted are the files lvms-rebase writes that differ from HEAD after a run without
	// --commit: a run that changed nothing does not say "No files changed" over them.
	Uncommitted []string
}

// SnapshotBefore reads the current bytes of every path the run changes or removes, so the
// PR body can describe the change after the tree has been rewritten.
func SnapshotBefore(root string, changes *tree.Changes) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range append(append([]string{}, changes.Change...), changes.Remove...) {
		data, err := safefile.ReadIn(root, p, 0)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		out[p] = data
	}
	return out, nil
}

// Body renders the markdown body: version change, image digests per arch, RBAC rules
// added/removed, CRD changes and the files changed.
func Body(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## LVMS rebase\n\n")
	fmt.Fprintf(&b, "| | before | after |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| LVMS bundle | %s | %s |\n", orNone(in.OldVersion), in.NewVersion)
	fmt.Fprintf(&b, "| OCP payload | %s | %s |\n\n", orNone(in.OldPayload), in.NewPayload)

	// Image digests per arch from the release JSONs.
	var imgLines []string
	for _, p := range sortedUnion(in.After) {
		arch, ok := releasefile.ArchOf(p)
		if !ok {
			continue
		}
		oldImgs, newImgs := releaseImages(in.Before[p]), releaseImages(in.After[p])
		for _, k := range sortedUnion(oldImgs, newImgs) {
			o, n := oldImgs[k], newImgs[k]
			if o != n {
				imgLines = append(imgLines, fmt.Sprintf("| %s | `%s` | %s | %s |", arch, k, digestOf(o), digestOf(n)))
			}
		}
	}
	b.WriteString("### Image digests\n\n")
	if len(imgLines) == 0 {
		b.WriteString("No image changes.\n\n")
	} else {
		b.WriteString("| arch | key | before | after |\n|---|---|---|---|\n")
		b.WriteString(strings.Join(imgLines, "\n") + "\n\n")
	}

	// CRDs.
	var crds []string
	for _, p := range sortedUnion(in.Before, in.After) {
		if path.Dir(p) == releasefile.RepoDir {
			continue
		}
		o, n := objectOf(in.Before[p]), objectOf(in.After[p])
		if o.Kind != "CustomResourceDefinition" && n.Kind != "CustomResourceDefinition" {
			continue
		}
		name := n.Metadata.Name
		if name == "" {
			name = o.Metadata.Name
		}
		switch {
		case in.Before[p] == nil:
			crds = append(crds, fmt.Sprintf("- added `%s`", name))
		case in.After[p] == nil:
			crds = append(crds, fmt.Sprintf("- removed `%s`", name))
		default:
			crds = append(crds, fmt.Sprintf("- changed `%s` (%s)", name, p))
		}
	}
	provenanceSection(&b, in.Provenance)
	rbacSections(&b, in.RBAC)
	section(&b, "CRDs", crds, "No CRD changes.")
	bundleEvolution(&b, in)

	section(&b, "Files", fileLines(in), noFiles(in.Uncommitted))
	warningsSection(&b, in.Warnings)
	return b.String()
}

// provenanceSection says, per digest written or used, which key signed it for which identity;
// an unsigned digest, and one signed by OpenShift CI only, is said plainly before the table.
func provenanceSection(b *strings.Builder, rep *provenance.Report) {
	if rep == nil {
		section(b, "Provenance", nil, "No signature was verified: the lock this run reproduced records no provenance.")
		return
	}
	policy := "the built-in policy (Red Hat's and OpenShift CI's keys)"
	if rep.Policy != provenance.BuiltinSource {
		policy = "the policy `" + rep.Policy + "`"
	}
	lines := []string{fmt.Sprintf("Every digest below was checked against %s.\n", policy)}
	if u := rep.Unsigned(); len(u) > 0 {
		lines = append(lines, fmt.Sprintf("**%d digest(s) are unsigned**%s.\n", len(u), map[bool]string{true: " (the run allowed unsigned content)", false: ""}[rep.AllowUnsigned]))
	}
	if ci := rep.CIOnly(); len(ci) > 0 {
		lines = append(lines, fmt.Sprintf("**%d digest(s) are CI-signed only** (OpenShift CI's key, not a Red Hat release key).\n", len(ci)))
	}
	lines = append(lines, "| image | digest | signed by | for identity |\n|---|---|---|---|")
	for _, r := range rep.Records {
		lines = append(lines, fmt.Sprintf("| %s `%s` | `%s` | %s | %s |", r.Role, r.Image, r.Digest, signer(r), identities(r)))
	}
	section(b, "Provenance", lines, "")
}

// signer says who proved a record: the keys of its signatures, or why none did.
func signer(r provenance.Record) string {
	switch r.Status {
	case provenance.StatusCovered:
		return "covered by the payload `" + r.CoveredBy + "`"
	case provenance.StatusUnsigned:
		return "**unsigned**: " + r.Reason
	}
	var out []string
	for _, s := range r.Signatures {
		who := s.KeyName
		if who == "" {
			who = "key"
		}
		if s.Class == provenance.ClassCI {
			who = "**CI-signed only**: " + who
		}
		src := "store " + s.Store + fmt.Sprintf(" #%d", s.N)
		if s.Format == provenance.FormatCosign {
			src = "`.sig` " + s.Sig
		}
		out = append(out, fmt.Sprintf("%s `%s` (%s, %s)", who, s.Key, s.Format, src))
	}
	return strings.Join(out, "; ")
}

// identities are the identities a record's signatures claim (and the list digest a signature
// names instead of the record's own).
func identities(r provenance.Record) string {
	var out []string
	for _, s := range r.Signatures {
		id := "`" + s.Identity + "`"
		if s.SignedDigest != "" {
			id += " (its list `" + s.SignedDigest + "`)"
		}
		out = append(out, id)
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, "; ")
}

// rbacSections lists the RBAC changes, and the escalations in a Security review section of
// their own; a release whose RBAC did not change says so.
func rbacSections(b *strings.Builder, rv *review.RBAC) {
	if rv == nil {
		return
	}
	var esc, changes []string
	for _, e := range rv.Escalations {
		esc = append(esc, fmt.Sprintf("- `%s` (%s): `%s`", e.Role, e.Class, e.Rule))
	}
	for _, c := range rv.Changes {
		changes = append(changes, fmt.Sprintf("- %s `%s`: %s `%s`", strings.SplitN(c.Role, " ", 2)[0], strings.SplitN(c.Role, " ", 2)[1], c.Class, c.Rule))
	}
	if len(esc) > 0 {
		section(b, "Security review", append([]string{"This release grants access a security review must look at:\n"}, esc...), "")
	}
	section(b, "RBAC rules", changes, "RBAC did not change.")
}

// warningsSection repeats every warning of the run, verbatim (a code block keeps markdown
// from reading them).
func warningsSection(b *strings.Builder, warnings []string) {
	if len(warnings) == 0 {
		section(b, "Warnings", nil, "The run printed no warnings.")
		return
	}
	section(b, "Warnings", []string{"```text\n" + strings.Join(warnings, "\n") + "\n```"}, "")
}

// fileLines lists the files added, changed and removed, after a count of the changes of
// meaning apart from those of formatting only.
func fileLines(in Input) []string {
	var files []string
	for _, p := range in.Changes.Add {
		files = append(files, "- added `"+p+"`")
	}
	for _, p := range in.Changes.Change {
		files = append(files, "- changed `"+p+"`")
	}
	for _, p := range in.Changes.Remove {
		files = append(files, "- removed `"+p+"`")
	}
	if len(files) > 0 {
		files = append([]string{fmt.Sprintf("%d added, %d changed (%d in meaning, %d only in formatting), %d removed.\n",
			len(in.Changes.Add), len(in.Changes.Change), len(in.Semantic), len(in.Formatting), len(in.Changes.Remove))}, files...)
	}
	return files
}

// bundleEvolution lists what the bundle brought that MicroShift has not decided on yet:
// images the era does not declare, objects not shipped, and recipe entries changed.
func bundleEvolution(b *strings.Builder, in Input) {
	var imgs, objs, recs []string
	for _, img := range in.Undeclared {
		var rels []string
		for _, a := range in.Arches {
			rels = append(rels, releasefile.FileName(a))
		}
		imgs = append(imgs, fmt.Sprintf("- `%s` (`%s`) → release key `%s` in %s; %s; not declared in the era table: review and declare it",
			img.Name, img.Ref, img.Key, strings.Join(rels, ", "), usesOf(in.ImageUses, img.Key)))
	}
	for _, e := range in.Excluded {
		objs = append(objs, fmt.Sprintf("- %s `%s` (%s): %s", e.Kind, e.Name, e.File, e.Reason))
	}
	for _, c := range in.Recipes {
		for _, f := range c.Added {
			recs = append(recs, fmt.Sprintf("- `%s`: listed `assets/%s/%s`", c.Recipe, c.Dir, f))
		}
		for _, f := range c.Dropped {
			recs = append(recs, fmt.Sprintf("- `%s`: dropped `assets/%s/%s`", c.Recipe, c.Dir, f))
		}
	}
	section(b, "New bundle images", imgs, "No new bundle images.")
	section(b, "Bundle objects not shipped", objs, "Every bundle object is shipped.")
	section(b, "Asset recipes", recs, "No recipe changes.")
}

// usesOf says where the shipped files use a release key, as render found the placeholders.
func usesOf(uses []render.ImageUse, key string) string {
	var at []string
	for _, u := range uses {
		if u.Key == releasefile.TemplateKey(key) {
			at = append(at, fmt.Sprintf("`%s` %s", u.File, u.Field))
		}
	}
	if len(at) == 0 {
		return "no shipped file uses it"
	}
	return fmt.Sprintf("used as `%s` in %s", releasefile.Placeholder(key), strings.Join(at, ", "))
}

// noFiles is the Files section of a run that changed no file: nothing differs from what
// the inputs render, and, unless listed, nothing from what is committed.
func noFiles(uncommitted []string) string {
	if len(uncommitted) == 0 {
		return "No files changed."
	}
	return fmt.Sprintf("No files changed by this run, but %d file(s) it writes differ from HEAD and are not committed: %s.",
		len(uncommitted), strings.Join(uncommitted, ", "))
}

func section(b *strings.Builder, title string, lines []string, empty string) {
	fmt.Fprintf(b, "### %s\n\n", title)
	if len(lines) == 0 {
		b.WriteString(empty + "\n\n")
		return
	}
	b.WriteString(strings.Join(lines, "\n") + "\n\n")
}

type prObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func objectOf(data []byte) prObject {
	var o prObject
	if data != nil {
		_ = yaml.Unmarshal(data, &o) // a file that is not one object simply contributes nothing
	}
	return o
}

// releaseImages are a release file's images; none when it is absent or unreadable (the tree
// was checked before the run).
// releaseImages are a release file's images; none when it is absent or unreadable (the tree
// was checked before the run).
func releaseImages(data []byte) map[string]string {
	f, err := releasefile.Parse(data)
	if err != nil {
		return nil
	}
	return f.Images
}

func digestOf(ref string) string {
	if ref == "" {
		return "–"
	}
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		d := ref[i+1:]
		if len(d) > 19 {
			d = d[:19] + "…"
		}
		return "`" + d + "`"
	}
	return "`" + ref + "`"
}

func orNone(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// sortedUnion returns the keys of all maps, sorted and without repeats.
func sortedUnion[V any](ms ...map[string]V) []string {
	var out []string
	for _, m := range ms {
		out = slices.AppendSeq(out, maps.Keys(m))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckWritable tells whether a file can be written at p without changing anything: an
// existing regular file is opened for writing (not truncated), a new one is tried as a
// temporary sibling that is removed again.
func CheckWritable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("expected a regular file, found %v", fi.Mode().Type())
	case err == nil:
		// safefile: opened to write, never read, and only once it was found a regular file.
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("not writable: %w", err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	// The same temporary sibling Write creates, abandoned.
	f, err := atomicfile.Create(p, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create the file: %w", err)
	}
	return f.Discard()
}

// Write writes the body of in to p atomically (applier/atomicfile: a temporary sibling,
// synced and renamed), so a kill leaves the old file or the new one, never half of it.
func Write(p string, in Input) error {
	_, err := atomicfile.WriteFile(p, []byte(Body(in)), 0o644)
	return err
}

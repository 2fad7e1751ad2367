package rebase

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/recipe"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// prInput is what a pull-request body describes: the files before and after.
type prInput struct {
	oldVersion, newVersion string // bundle tags
	oldPayload, newPayload string
	changes                *tree.Changes
	before, after          map[string][]byte // changed and removed paths only
	undeclared             []bundle.Image
	excluded               []bundle.Excluded
	recipes                []recipe.Change
	semantic, formatting   []string
}

// snapshotBefore reads the current bytes of every path the run changes or removes, so the
// PR body can describe the change after the tree has been rewritten.
func snapshotBefore(root string, changes *tree.Changes) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range append(append([]string{}, changes.Change...), changes.Remove...) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		out[p] = data
	}
	return out, nil
}

// prBody renders the markdown body: version change, image digests per arch, RBAC rules
// added/removed, CRD changes and the files changed.
func prBody(in prInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## LVMS rebase\n\n")
	fmt.Fprintf(&b, "| | before | after |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| LVMS bundle | %s | %s |\n", orNone(in.oldVersion), in.newVersion)
	fmt.Fprintf(&b, "| OCP payload | %s | %s |\n\n", orNone(in.oldPayload), in.newPayload)

	// Image digests per arch from the release JSONs.
	var imgLines []string
	for _, p := range sortedUnion(in.after) {
		if !strings.HasPrefix(p, "assets/release/release-") {
			continue
		}
		arch := strings.TrimSuffix(strings.TrimPrefix(path.Base(p), "release-"), ".json")
		oldImgs, newImgs := releaseImages(in.before[p]), releaseImages(in.after[p])
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

	// RBAC rules and CRDs.
	var rbac, crds []string
	for _, p := range sortedUnion(in.before, in.after) {
		if strings.HasPrefix(p, "assets/release/") {
			continue
		}
		o, n := objectOf(in.before[p]), objectOf(in.after[p])
		kind := n.Kind
		if kind == "" {
			kind = o.Kind
		}
		name := n.Metadata.Name
		if name == "" {
			name = o.Metadata.Name
		}
		switch kind {
		case "ClusterRole", "Role":
			added, removed := diffStrings(ruleStrings(o.Rules), ruleStrings(n.Rules))
			for _, r := range added {
				rbac = append(rbac, fmt.Sprintf("- %s `%s`: added `%s`", kind, name, r))
			}
			for _, r := range removed {
				rbac = append(rbac, fmt.Sprintf("- %s `%s`: removed `%s`", kind, name, r))
			}
		case "CustomResourceDefinition":
			switch {
			case in.before[p] == nil:
				crds = append(crds, fmt.Sprintf("- added `%s`", name))
			case in.after[p] == nil:
				crds = append(crds, fmt.Sprintf("- removed `%s`", name))
			default:
				crds = append(crds, fmt.Sprintf("- changed `%s` (%s)", name, p))
			}
		}
	}
	section(&b, "RBAC rules", rbac, "No RBAC rule changes.")
	section(&b, "CRDs", crds, "No CRD changes.")
	bundleEvolution(&b, in)

	section(&b, "Files", fileLines(in), "No files changed.")
	return b.String()
}

// fileLines lists the files added, changed and removed, after a count of the changes of
// meaning apart from those of formatting only.
func fileLines(in prInput) []string {
	var files []string
	for _, p := range in.changes.Add {
		files = append(files, "- added `"+p+"`")
	}
	for _, p := range in.changes.Change {
		files = append(files, "- changed `"+p+"`")
	}
	for _, p := range in.changes.Remove {
		files = append(files, "- removed `"+p+"`")
	}
	if len(files) > 0 {
		files = append([]string{fmt.Sprintf("%d changed in meaning, %d only in formatting.\n", len(in.semantic), len(in.formatting))}, files...)
	}
	return files
}

// bundleEvolution lists what the bundle brought that MicroShift has not decided on yet:
// images the era does not declare, objects not shipped, and recipe entries changed.
func bundleEvolution(b *strings.Builder, in prInput) {
	var imgs, objs, recs []string
	for _, img := range in.undeclared {
		imgs = append(imgs, fmt.Sprintf("- `%s` (`%s`) → release key `%s`, templated as `{{ .ReleaseImage.%s }}`; not declared in the era table: review and declare it",
			img.Name, img.Ref, img.Key, img.Key))
	}
	for _, e := range in.excluded {
		objs = append(objs, fmt.Sprintf("- %s `%s` (%s): %s", e.Kind, e.Name, e.File, e.Reason))
	}
	for _, c := range in.recipes {
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
	Rules []struct {
		APIGroups       []string `json:"apiGroups"`
		Resources       []string `json:"resources"`
		ResourceNames   []string `json:"resourceNames"`
		NonResourceURLs []string `json:"nonResourceURLs"`
		Verbs           []string `json:"verbs"`
	} `json:"rules"`
}

func objectOf(data []byte) prObject {
	var o prObject
	if data != nil {
		_ = yaml.Unmarshal(data, &o) // a file that is not one object simply contributes nothing
	}
	return o
}

func ruleStrings(rules []struct {
	APIGroups       []string `json:"apiGroups"`
	Resources       []string `json:"resources"`
	ResourceNames   []string `json:"resourceNames"`
	NonResourceURLs []string `json:"nonResourceURLs"`
	Verbs           []string `json:"verbs"`
}) []string {
	var out []string
	for _, r := range rules {
		s := fmt.Sprintf("apiGroups=%v resources=%v verbs=%v", r.APIGroups, r.Resources, r.Verbs)
		if len(r.ResourceNames) > 0 {
			s += fmt.Sprintf(" resourceNames=%v", r.ResourceNames)
		}
		if len(r.NonResourceURLs) > 0 {
			s += fmt.Sprintf(" nonResourceURLs=%v", r.NonResourceURLs)
		}
		out = append(out, s)
	}
	return out
}

func releaseImages(data []byte) map[string]string {
	var f struct {
		Images map[string]string `json:"images"`
	}
	if data != nil {
		_ = json.Unmarshal(data, &f)
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

func diffStrings(old, new []string) (added, removed []string) {
	om, nm := map[string]bool{}, map[string]bool{}
	for _, s := range old {
		om[s] = true
	}
	for _, s := range new {
		nm[s] = true
	}
	for _, s := range new {
		if !om[s] {
			added = append(added, s)
		}
	}
	for _, s := range old {
		if !nm[s] {
			removed = append(removed, s)
		}
	}
	return added, removed
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

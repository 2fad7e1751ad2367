package render

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// checkTargets refuses a patch or replacement of the overlay, or of a kustomization it builds
// on, whose target names an object the build does not contain. Kustomize applies a patch with
// a target to whatever matches, and to nothing, silently, when upstream renamed or removed
// the object it was written for. A target that selects by labels or annotations only is
// conditional on purpose (remove a field wherever upstream puts it) and is not checked. The
// build's objects are matched, which equals the objects the patch saw as long as no overlay
// renames objects (none does).
func checkTargets(fsys filesys.FileSystem, staging, overlay string, rm resmap.ResMap) error {
	var problems []string
	queue := []string{filepath.Join(staging, filepath.FromSlash(overlay))}
	seen := map[string]bool{}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		k, file, err := readKustomization(fsys, dir)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(staging, file)
		for i, p := range k.Patches {
			problems = append(problems, missingTarget(rm, p.Target, fmt.Sprintf("%s: patches[%d]", filepath.ToSlash(rel), i))...)
		}
		for i, r := range k.Replacements {
			for j, t := range r.Targets {
				problems = append(problems, missingTarget(rm, t.Select, fmt.Sprintf("%s: replacements[%d].targets[%d]", filepath.ToSlash(rel), i, j))...)
			}
		}
		for _, res := range k.Resources {
			if d := filepath.Join(dir, res); fsys.IsDir(d) {
				queue = append(queue, filepath.Clean(d))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// missingTarget describes a target naming an object that rm lacks (nil when it has one, or
// when the target names no object).
func missingTarget(rm resmap.ResMap, s *types.Selector, where string) []string {
	if s == nil || s.Name == "" {
		return nil
	}
	found, err := rm.Select(*s)
	if err != nil {
		return []string{fmt.Sprintf("%s: target %s: %v", where, describe(s), err)}
	}
	if len(found) == 0 {
		return []string{fmt.Sprintf("%s: target %s matches no object of the build: upstream renamed or removed it; "+
			"update the overlay to what the assets now have", where, describe(s))}
	}
	return nil
}

func describe(s *types.Selector) string {
	d := s.Kind + " " + s.Name
	if s.Namespace != "" {
		d = s.Kind + " " + s.Namespace + "/" + s.Name
	}
	return strings.TrimSpace(d)
}

// readKustomization reads the kustomization file of dir, under any name kustomize accepts.
func readKustomization(fsys filesys.FileSystem, dir string) (*types.Kustomization, string, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		file := filepath.Join(dir, name)
		if !fsys.Exists(file) {
			continue
		}
		data, err := fsys.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("reading %s: %w", file, err)
		}
		var k types.Kustomization
		if err := yaml.Unmarshal(data, &k); err != nil {
			return nil, "", fmt.Errorf("decoding %s: %w", file, err)
		}
		k.FixKustomization()
		return &k, file, nil
	}
	return nil, "", fmt.Errorf("%s: no kustomization file", dir)
}

// upstreamPlaceholder is a template variable of the snapshot operator's assets
// (${CONTROLPLANE_NAMESPACE}, ${OPERAND_IMAGE}, …). The operator fills them at run time;
// MicroShift has no operator, so each must be patched by the overlay or filled by the
// translation.
var upstreamPlaceholder = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// checkSnapshot refuses a snapshot webhook in an era that ships none, then any upstream
// template variable left in the snapshot overlay's files.
func checkSnapshot(files []File, e era.Era, overlay string) error {
	if !e.SnapshotWebhook {
		for _, f := range files {
			if f.Kind == "ValidatingWebhookConfiguration" {
				return fmt.Errorf("%s %q: the era ships no snapshot validation webhook", f.Kind, f.Name)
			}
		}
	}
	return checkPlaceholders(files, overlay)
}

// checkPlaceholders refuses a file in which an upstream template variable survived the
// overlay: a new upstream variable, or a patch that no longer reaches the field.
func checkPlaceholders(files []File, overlay string) error {
	var bad []string
	for _, f := range files {
		var obj any
		if err := yaml.Unmarshal(f.Data, &obj); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, leak := range placeholders(obj, "") {
			bad = append(bad, fmt.Sprintf("%s: %s %s %s", f.Path, f.Kind, f.Name, leak))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("upstream template variables left after the overlay (patch them in %s/kustomization.yaml; "+
		"a substring inside a value is filled by the snapshot translation's template values): %s", overlay, strings.Join(bad, "; "))
}

// placeholders lists, sorted, "field <path>: <variable>" for every upstream template variable
// in a key or string value of v.
func placeholders(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case string:
		for _, m := range upstreamPlaceholder.FindAllString(x, -1) {
			out = append(out, fmt.Sprintf("field %s: %s", path, m))
		}
	case map[string]any:
		for k, val := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			for _, m := range upstreamPlaceholder.FindAllString(k, -1) {
				out = append(out, fmt.Sprintf("key %s: %s", p, m))
			}
			out = append(out, placeholders(val, p)...)
		}
	case []any:
		for i, val := range x {
			out = append(out, placeholders(val, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	sort.Strings(out)
	return out
}

// pruneEmptyMetadata drops a metadata.labels or metadata.annotations map left empty: a
// JSON 6902 remove of an object's last label leaves `labels: {}` (kustomize drops an emptied
// annotations map itself), which would add noise to the file while meaning nothing.
func pruneEmptyMetadata(obj map[string]any) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"labels", "annotations"} {
		if m, ok := meta[k].(map[string]any); ok && len(m) == 0 {
			delete(meta, k)
		}
	}
}

package recipe

import (
	"fmt"
	"path"
	"sort"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Check holds the invariant presubmit.py enforces for the components: every file of each
// directory is listed in its recipe entry, each once, and every entry's file exists or the
// entry is ignored. It returns every violation found. names are the recipe files, as for
// Reconcile; every entry of a directory listed in two recipes is checked.
func Check(root string, names []string, comps []Component) error {
	recipes, err := readRecipes(root, names)
	if err != nil {
		return err
	}
	var problems []string
	for _, c := range comps {
		files, err := ReadDirNames(root, c.Dir)
		if err != nil {
			return err
		}
		matches, err := findEntries(recipes, c.Dir)
		if err != nil {
			return err
		}
		if len(matches) == 0 {
			problems = append(problems, fmt.Sprintf("assets/%s/: no recipe entry", c.Dir))
		}
		for _, m := range matches {
			problems = append(problems, checkEntry(m.rf.path, c.Dir, m.node, files)...)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("recipes out of step with assets/:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func checkEntry(recipe, dir string, entry *kyaml.RNode, names []string) []string {
	var problems []string
	exists := set(names)
	listed := map[string]bool{}
	var items []*kyaml.RNode
	if f := entry.Field("files"); f != nil {
		items, _ = f.Value.Elements()
	}
	for _, it := range items {
		name := ""
		if f := it.Field("file"); f != nil {
			name = kyaml.GetValue(f.Value)
		}
		p := path.Join("assets", dir, name)
		if listed[name] {
			problems = append(problems, fmt.Sprintf("%s: %s listed twice", recipe, p))
		}
		listed[name] = true
		if !exists[name] && it.Field("ignore") == nil {
			problems = append(problems, fmt.Sprintf("%s: %s is listed but does not exist", recipe, p))
		}
	}
	for _, n := range names {
		if !listed[n] {
			problems = append(problems, fmt.Sprintf("%s: %s is in no recipe", recipe, path.Join("assets", dir, n)))
		}
	}
	return problems
}

// Package recipe keeps MicroShift's own records in step with what a rebase writes: the asset
// recipes under scripts/auto-rebase/ (read by handle_assets.py, checked by presubmit.py behind
// `make verify-assets`) and the last_rebase_lvms.sh record of the bundle used.
//
// A recipe lists, per assets/ directory, every file with an optional `ignore:` reason;
// presubmit.py fails when a file under assets/ is in no recipe, a listed file does not exist,
// or a file is listed twice in one directory. When a rebase changes the set of files of a
// component directory, Reconcile adds an entry per new file and drops the entries of removed
// files. The recipe is edited as text at the places its YAML node tree locates (entry lines
// come from the parsed nodes), so comments, blank lines, key order, `True` spellings, list
// indentation and the other entries stay byte for byte.
package recipe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/internal/strictyaml"
)

// Dir holds the recipes and records, relative to the MicroShift root.
const Dir = "scripts/auto-rebase"

// RecipeFiles are the recipe files searched for a component's entry, in this order
// (lvms_assets.yaml is the 4.14–4.17 name of assets_lvms.yaml).
var RecipeFiles = []string{"assets.yaml", "assets_lvms.yaml", "lvms_assets.yaml"}

// Component is an assets/ directory whose file set a rebase decides.
type Component struct {
	// Dir is relative to assets/, without a trailing slash ("components/lvms").
	Dir string
	// Ignore gives the `ignore:` reason of the entry added for a new file of that name; a
	// file without one gets a plain copy entry.
	Ignore map[string]string
	// Src gives the `src:` of the entry added for a new file whose upstream source is not
	// in the directory's src (handle_assets.py joins it onto the directory's src).
	Src map[string]string
}

// extracted is MicroShift's reason for the RBAC files split out of 05_operand_rbac.yaml.
const extracted = "extracted automatically from 05_operand_rbac.yaml"

// provided is MicroShift's reason for hand-maintained LVMS files.
const provided = "provided by MicroShift"

// Components are the two directories lvms-rebase owns, with the reasons MicroShift's
// recipes give for files no upstream source has.
var Components = []Component{
	{Dir: "components/lvms", Ignore: map[string]string{
		"topolvm-openshift-storage_namespace.yaml":                              provided,
		"topolvm_default-storage-class.yaml":                                    provided,
		"lvms_default-lvmcluster.yaml":                                          provided,
		"csi-driver.yaml":                                                       provided,
		"topolvm-lvmd-config_configmap_v1.yaml":                                 provided,
		"topolvm-controller_deployment.yaml":                                    provided,
		"topolvm-node_daemonset.yaml":                                           provided,
		"topolvm-node-securitycontextconstraint.yaml":                           provided,
		"topolvm-node-scc_rbac.authorization.k8s.io_v1_clusterrole.yaml":        provided,
		"topolvm-node-scc_rbac.authorization.k8s.io_v1_clusterrolebinding.yaml": provided,
	}},
	{Dir: "components/csi-snapshot-controller", Ignore: map[string]string{
		"clusterrole.yaml":        extracted,
		"clusterrolebinding.yaml": extracted,
		"role.yaml":               extracted,
		"rolebinding.yaml":        extracted,
	}, Src: map[string]string{
		"05_operand_rbac.yaml":            "../manifests/",
		"webhook_clusterrole.yaml":        "./rbac/",
		"webhook_clusterrolebinding.yaml": "./rbac/",
	}},
}

// Change is what Reconcile did to one component's entry.
type Change struct {
	Recipe  string // recipe path relative to the root
	Dir     string
	Added   []string
	Dropped []string
}

// Result is the outcome of Reconcile.
type Result struct {
	// Files are the recipe files to write (path relative to the root → content); only
	// changed ones.
	Files map[string][]byte
	// Changes list the entries added and dropped, per component.
	Changes []Change
	// Warnings report what could not be reconciled (no recipe, no entry for a directory).
	Warnings []string
}

// Reconcile brings the recipes under root in line with the file sets of the components after
// a run (after: component Dir → file names). names are the recipe files under Dir to search,
// in order (RecipeFiles; a branch's own names when it has others). before are the names in
// the tree before the run. An entry is dropped when its file is gone and it is not ignored,
// or when the run removed the file (an ignored entry for a missing file would fail
// presubmit.py); a file without an entry gets one, appended to the directory's list. A
// directory listed in two recipes is edited in both, the same way; one listed twice in one
// recipe is refused. A recipe that does not parse is an error naming it and the line, and
// nothing is returned to write.
func Reconcile(root string, names []string, comps []Component, before, after map[string][]string) (*Result, error) {
	res := &Result{Files: map[string][]byte{}}
	recipes, err := readRecipes(root, names)
	if err != nil {
		return nil, err
	}
	if len(recipes) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no recipe (%s) under %s/: MicroShift's recipes were not updated", strings.Join(names, ", "), Dir))
		return res, nil
	}
	for _, c := range comps {
		matches, err := findEntries(recipes, c.Dir)
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("no recipe lists assets/%s/ (searched %s/%s): presubmit.py will fail until one does", c.Dir, Dir, strings.Join(names, ", ")))
			continue
		}
		if len(matches) > 1 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("assets/%s/ is listed in %s: each entry was kept in line with the directory", c.Dir, describe(matches)))
		}
		for _, m := range matches {
			ch, err := m.rf.reconcile(m.node, c, set(before[c.Dir]), after[c.Dir])
			if err != nil {
				return nil, fmt.Errorf("%s: assets/%s/: %w", m.rf.path, c.Dir, err)
			}
			if len(ch.Added)+len(ch.Dropped) > 0 {
				res.Changes = append(res.Changes, ch)
			}
		}
	}
	for _, rf := range recipes {
		if !bytes.Equal(rf.data, rf.orig) {
			res.Files[rf.path] = rf.data
		}
	}
	return res, nil
}

// Validate reads and parses the recipes under root (names as for Reconcile) and looks up the
// components' entries, so that a run refuses a broken recipe, or a directory listed twice in
// one, before it fetches or writes anything.
func Validate(root string, names []string, comps []Component) error {
	recipes, err := readRecipes(root, names)
	if err != nil {
		return err
	}
	for _, c := range comps {
		if _, err := findEntries(recipes, c.Dir); err != nil {
			return err
		}
	}
	return nil
}

// recipeFile is one recipe being edited: its text and its parse.
type recipeFile struct {
	path string // relative to the root
	orig []byte
	data []byte
}

// readRecipes reads the recipes that exist among names and checks that each parses as a
// recipe (see validate).
func readRecipes(root string, names []string) ([]*recipeFile, error) {
	var out []*recipeFile
	for _, name := range names {
		p := path.Join(Dir, name)
		data, err := safefile.ReadIn(root, p, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading recipe %s: %w", p, err)
		}
		rf := &recipeFile{path: p, orig: data, data: data}
		if _, err := rf.entries(); err != nil {
			return nil, err
		}
		out = append(out, rf)
	}
	return out, nil
}

// match is a top-level entry of a recipe listing a component directory.
type match struct {
	rf   *recipeFile
	node *kyaml.RNode
}

// findEntries returns the top-level `assets` entries whose dir is dir once normalised
// (`./components/lvms/` is `components/lvms`), in recipe order. Two in one recipe are an
// error naming both lines.
func findEntries(recipes []*recipeFile, dir string) ([]match, error) {
	var out []match
	for _, rf := range recipes {
		entries, err := rf.entries()
		if err != nil {
			return nil, err
		}
		first := 0
		for _, e := range entries {
			d := e.Field("dir")
			if d == nil || NormalizeDir(kyaml.GetValue(d.Value)) != dir {
				continue
			}
			if first != 0 {
				return nil, fmt.Errorf("%s: assets/%s/ is listed twice (lines %d and %d): presubmit.py and handle_assets.py would act on both; merge them into one entry", rf.path, dir, first, e.YNode().Line)
			}
			first = e.YNode().Line
			out = append(out, match{rf: rf, node: e})
		}
	}
	return out, nil
}

// describe names the recipes and lines of matches, for messages.
func describe(ms []match) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s (line %d)", m.rf.path, m.node.YNode().Line))
	}
	return strings.Join(parts, " and ")
}

// NormalizeDir is a recipe dir as a path relative to assets/ without "./" or a trailing
// slash, as handle_assets.py's os.path.join reads it: "./components/lvms/" is "components/lvms".
func NormalizeDir(d string) string {
	return path.Clean(strings.TrimSpace(d))
}

// entries parses the recipe and returns its top-level `assets` entries; a recipe that is not
// YAML, or not shaped as presubmit.py and handle_assets.py read it, is an error naming the
// file and the line.
func (rf *recipeFile) entries() ([]*kyaml.RNode, error) {
	// PyYAML, which presubmit.py and handle_assets.py read the recipes with, refuses a
	// non-UTF-8 byte too, so a Latin-1 comment is named, not dropped or guessed at.
	if err := strictyaml.UTF8(rf.data); err != nil {
		return nil, fmt.Errorf("recipe %s: %w", rf.path, err)
	}
	n, err := kyaml.Parse(string(rf.data))
	if err != nil {
		// yaml.v3 names the line its enclosing block starts on; sigs.k8s.io/yaml's parser
		// (goyaml.v2) names the line of the problem, which is the one to fix.
		if _, err2 := yaml.YAMLToJSON(rf.data); err2 != nil {
			err = err2
		}
		return nil, fmt.Errorf("recipe %s does not parse: %w", rf.path, err)
	}
	if err := validate(n.YNode()); err != nil {
		return nil, fmt.Errorf("recipe %s: %w", rf.path, err)
	}
	return n.Field("assets").Value.Elements()
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// ReadDirNames lists the YAML files of root/assets/<dir> (none when it does not exist).
func ReadDirNames(root, dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "assets", filepath.FromSlash(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing assets/%s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Existing are the recipe paths (relative to the root) present under root, among names.
func Existing(root string, names []string) []string {
	var out []string
	for _, n := range names {
		p := path.Join(Dir, n)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	return out
}

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
	Recipe  string   `json:"recipe"` // recipe path relative to the root
	Dir     string   `json:"dir"`
	Added   []string `json:"added,omitempty"`
	Dropped []string `json:"dropped,omitempty"`
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
// a run (after: component Dir → file names). before are the names in the tree before the
// run. An entry is dropped when its file is gone and it is not ignored, or when the run
// removed the file (an ignored entry for a missing file would fail presubmit.py); a file
// without an entry gets one, appended to the directory's list.
func Reconcile(root string, comps []Component, before, after map[string][]string) (*Result, error) {
	res := &Result{Files: map[string][]byte{}}
	recipes, err := readRecipes(root)
	if err != nil {
		return nil, err
	}
	if len(recipes) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no recipe (%s) under %s/: MicroShift's recipes were not updated", strings.Join(RecipeFiles, ", "), Dir))
		return res, nil
	}
	for _, c := range comps {
		rf, entry := findEntry(recipes, c.Dir)
		if entry == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("no recipe lists assets/%s/ (searched %s/%s): presubmit.py will fail until one does", c.Dir, Dir, strings.Join(RecipeFiles, ", ")))
			continue
		}
		ch, err := rf.reconcile(entry, c, set(before[c.Dir]), after[c.Dir])
		if err != nil {
			return nil, fmt.Errorf("%s: assets/%s/: %w", rf.path, c.Dir, err)
		}
		if len(ch.Added)+len(ch.Dropped) > 0 {
			res.Changes = append(res.Changes, ch)
		}
	}
	for _, rf := range recipes {
		if !bytes.Equal(rf.data, rf.orig) {
			res.Files[rf.path] = rf.data
		}
	}
	return res, nil
}

// recipeFile is one recipe being edited: its text and its parse.
type recipeFile struct {
	path string // relative to the root
	orig []byte
	data []byte
}

func readRecipes(root string) ([]*recipeFile, error) {
	var out []*recipeFile
	for _, name := range RecipeFiles {
		p := path.Join(Dir, name)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading recipe %s: %w", p, err)
		}
		out = append(out, &recipeFile{path: p, orig: data, data: data})
	}
	return out, nil
}

// findEntry returns the recipe and the top-level `assets` entry whose dir is dir.
func findEntry(recipes []*recipeFile, dir string) (*recipeFile, *kyaml.RNode) {
	for _, rf := range recipes {
		entries, err := rf.entries()
		if err != nil {
			continue
		}
		for _, e := range entries {
			if d := e.Field("dir"); d != nil && strings.TrimSuffix(kyaml.GetValue(d.Value), "/") == dir {
				return rf, e
			}
		}
	}
	return nil, nil
}

func (rf *recipeFile) entries() ([]*kyaml.RNode, error) {
	n, err := kyaml.Parse(string(rf.data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rf.path, err)
	}
	assets := n.Field("assets")
	if assets == nil {
		return nil, fmt.Errorf("%s: no assets list", rf.path)
	}
	return assets.Value.Elements()
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

// Existing are the recipe paths (relative to the root) present under root.
func Existing(root string) []string {
	var out []string
	for _, n := range RecipeFiles {
		p := path.Join(Dir, n)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Package review reads what a rebase changes in the objects MicroShift runs and says what a
// reviewer must look at: RBAC escalations (new access to secrets, wildcards, escalate/bind/
// impersonate, cluster-wide writes, node and pod-exec access, bindings to admin roles) and
// new workloads (Deployments, DaemonSets, admission webhooks).
package review

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// Object is one object of a shipped file.
type Object struct {
	File string
	Obj  *unstructured.Unstructured
}

// ID names an object: Kind, then namespace/name or name.
func (o Object) ID() string {
	if ns := o.Obj.GetNamespace(); ns != "" {
		return o.Obj.GetKind() + " " + ns + "/" + o.Obj.GetName()
	}
	return o.Obj.GetKind() + " " + o.Obj.GetName()
}

// Decode returns the objects of the YAML files under dirs (slash-separated, relative), in
// path order; an object found in two files (MicroShift's multi-document 05_operand_rbac.yaml
// repeats its split files) is taken once.
func Decode(files map[string][]byte, dirs []string) ([]Object, error) {
	var out []Object
	seen := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !under(p, dirs) || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
			continue
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(files[p]), 4096)
		for {
			var m map[string]any
			if err := d.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if len(m) == 0 {
				continue
			}
			o := Object{File: p, Obj: &unstructured.Unstructured{Object: m}}
			if !seen[o.ID()] {
				seen[o.ID()] = true
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// ReadTree reads the regular YAML files directly under dirs of the tree at root (what the
// tree ships before the rebase) and decodes them.
func ReadTree(root string, dirs []string) ([]Object, error) {
	files := map[string][]byte{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			p := path.Join(dir, e.Name())
			data, err := safefile.ReadIn(root, p, 0)
			if err != nil {
				return nil, err
			}
			files[p] = data
		}
	}
	return Decode(files, dirs)
}

func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") && !strings.Contains(p[len(d)+1:], "/") {
			return true
		}
	}
	return false
}

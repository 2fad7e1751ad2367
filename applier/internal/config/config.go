// Package config reads MicroShift's configuration files as MicroShift does (pkg/config/files.go):
// config.yaml, then the drop-in directory's *.yaml files merged into it as JSON merge patches.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/internal/readfile"
)

// Merged reads configFile, then every *.yaml file under dropInDir in lexical walk order
// (subdirectories included), each merged into the result as an RFC 7386 JSON merge patch (maps
// merge, lists and scalars replace, null deletes); blank files are skipped and missing paths are
// no config. It returns the merged configuration as JSON (nil when there is none) and the name
// errors about it should use. Errors name the file.
func Merged(configFile, dropInDir string) (raw []byte, name string, err error) {
	var merged any
	var files []string
	if _, err := os.Stat(configFile); err == nil {
		files = append(files, configFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("MicroShift config %s: %w", configFile, err)
	}
	dropIns, err := dropInFiles(dropInDir)
	if err != nil {
		return nil, "", err
	}
	for _, f := range append(files, dropIns...) {
		data, err := readfile.Host(f, MaxFileSize)
		if err != nil {
			return nil, "", fmt.Errorf("reading MicroShift config: %w", err)
		}
		if strings.TrimSpace(string(data)) == "" {
			continue
		}
		var patch any
		if err := yaml.Unmarshal(data, &patch); err != nil {
			return nil, "", fmt.Errorf("MicroShift config %s: %w", f, err)
		}
		merged = mergePatch(merged, patch)
	}
	if merged == nil {
		return nil, "", nil
	}
	raw, err = json.Marshal(merged)
	if err != nil {
		return nil, "", err
	}
	name = configFile
	if len(dropIns) > 0 {
		name = fmt.Sprintf("%s merged with %d drop-ins from %s", configFile, len(dropIns), dropInDir)
	}
	return raw, name, nil
}

// MaxFileSize caps each configuration file; MaxDropIns the drop-in files read from one
// directory. A real config.yaml is a few kilobytes, and MicroShift ships a handful of drop-ins.
const (
	MaxFileSize = 1 << 20
	MaxDropIns  = 256
)

// dropInFiles lists dir's *.yaml files as MicroShift's filepath.WalkDir does, at most MaxDropIns.
func dropInFiles(dir string) ([]string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(d.Name()) == ".yaml" {
			if len(out) == MaxDropIns {
				return fmt.Errorf("more than %d *.yaml drop-in files", MaxDropIns)
			}
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking the MicroShift config drop-in dir %s: %w", dir, err)
	}
	return out, nil
}

// mergePatch applies an RFC 7386 JSON merge patch, what MicroShift's evanphx/json-patch
// MergePatch does to the drop-ins: objects merge key by key, null removes a key, anything else
// replaces the target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

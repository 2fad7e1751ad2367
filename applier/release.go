package applier

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
)

// releaseFile is the part of MicroShift's assets/release/release-<arch>.json the applier reads.
type releaseFile struct {
	Release struct {
		Base string `json:"base"`
	} `json:"release"`
	Images map[string]string `json:"images"`
}

// releaseImages reads release-<arch>.json at the root of fsys (MicroShift's assets/release
// directory) and returns the images with '-' replaced by '_' in every key, as MicroShift's
// pkg/release does for templates. A missing file is an error: MicroShift silently returned an
// empty map, which only failed later at template rendering.
func releaseImages(fsys fs.FS, arch string) (map[string]string, error) {
	if arch == "" || strings.ContainsAny(arch, `/\.`) {
		return nil, fmt.Errorf("release images: architecture %q: expected a MicroShift arch such as x86_64 or aarch64", arch)
	}
	name := "release-" + arch + ".json"
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("reading release file %s for arch %s: %w", name, arch, err)
	}
	var f releaseFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: expected {\"release\": {\"base\": …}, \"images\": {key: pull spec}}: %w", name, err)
	}
	if len(f.Images) == 0 {
		return nil, fmt.Errorf("%s: images: expected a non-empty object of pull specs", name)
	}
	out := make(map[string]string, len(f.Images))
	for k, v := range f.Images {
		tk := strings.ReplaceAll(k, "-", "_")
		if prev, ok := out[tk]; ok && prev != v {
			return nil, fmt.Errorf("%s: images keys differing only in '-'/'_' map to %s with different images", name, tk)
		}
		out[tk] = v
	}
	return out, nil
}

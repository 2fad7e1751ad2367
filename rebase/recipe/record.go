package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
)

// RecordPath is MicroShift's record of the last LVMS rebase (4.18 on; older branches kept a
// last_lvms_rebase.sh that lvms-rebase leaves alone).
var RecordPath = path.Join(Dir, "last_rebase_lvms.sh")

// defaultScript is the command MicroShift's record calls.
const defaultScript = "./scripts/auto-rebase/rebase_lvms.sh"

// recordLine finds the command of an existing record, to keep its script path.
var recordLine = regexp.MustCompile(`(?m)^(\S*rebase[_-]lvms\.sh) to `)

// Record returns the content of last_rebase_lvms.sh for a run on bundleRef, in MicroShift's
// format:
//
//	#!/bin/bash -x
//	./scripts/auto-rebase/rebase_lvms.sh to "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4"
//
// keeping the script path of an existing record.
func Record(root, bundleRef string) ([]byte, error) {
	script := defaultScript
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(RecordPath)))
	switch {
	case err == nil:
		if m := recordLine.FindSubmatch(data); m != nil {
			script = string(m[1])
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading %s: %w", RecordPath, err)
	}
	return []byte(fmt.Sprintf("#!/bin/bash -x\n%s to %q\n", script, bundleRef)), nil
}

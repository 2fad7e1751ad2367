package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/lvms-rebase/lvms-rebase/rebase/shrecord"
)

// RecordPath is MicroShift's record of the last LVMS rebase (4.18 on; older branches kept a
// last_lvms_rebase.sh that lvms-rebase leaves alone).
var RecordPath = path.Join(Dir, "last_rebase_lvms.sh")

// defaultScript is the command MicroShift's record calls.
const defaultScript = "./scripts/auto-rebase/rebase_lvms.sh"

// RecordCommand is the command a bundle record runs: rebase_lvms.sh (4.18 on) or
// rebase-lvms.sh (4.15–4.17) with `to <bundle>`; it is read with rebase/shrecord, as bash
// reads it.
var RecordCommand = shrecord.Spec{Scripts: []string{"rebase_lvms.sh", "rebase-lvms.sh"}, Sub: "to"}

// Record returns the content of last_rebase_lvms.sh for a run on bundleRef, in MicroShift's
// format:
//
//	#!/bin/bash -x
//	./scripts/auto-rebase/rebase_lvms.sh to "registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.4"
//
// keeping the script path of an existing record. An existing record that bash would not run
// as one such command (it does not parse, it runs two) is an error naming its line.
func Record(root, bundleRef string) ([]byte, error) {
	script := defaultScript
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(RecordPath)))
	switch {
	case err == nil:
		call, err := shrecord.Find(RecordPath, data, RecordCommand)
		if err != nil {
			return nil, err
		}
		if call != nil {
			script = call.Script
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading %s: %w", RecordPath, err)
	}
	return []byte(fmt.Sprintf("#!/bin/bash -x\n%s to %q\n", script, bundleRef)), nil
}

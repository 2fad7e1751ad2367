#!/usr/bin/env bash
# Makes DIR a buildable copy of the MicroShift-shaped consumer module (hack/consumer, see its
# doc.go), as MicroShift would have it after docs/embedding.md's patch: an assets/ tree to embed
# (the golden rebase output testdata/golden/tree-4.22/assets, main's layout) and a replace of the
# applier by this checkout's applier/. hack/test-consumer.sh builds and tests the copy;
# hack/verify-golangci-lint.sh lints it.
#
#   hack/consumer-copy.sh DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: hack/consumer-copy.sh DIR" >&2; exit 2; }
dir=$1
cd "$(dirname "$0")/.."
root=$(pwd)
cp -R hack/consumer/. "$dir/"
mkdir -p "$dir/assets"
cp -R testdata/golden/tree-4.22/assets/components testdata/golden/tree-4.22/assets/release "$dir/assets/"
cd "$dir"
"${GO:-go}" mod edit -replace "github.com/lvms-rebase/lvms-rebase/applier=${root}/applier"

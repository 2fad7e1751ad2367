#!/usr/bin/env bash
# Fails when a non-test function of the root module (outside hack/, the fixture generator and
# the applier module) is longer than 80 lines. `hack/verify-funclen.sh applier` checks the
# applier module on its own (with no exclusions).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  exec go run ./hack/funclen .
fi
for dir in "$@"; do
  go run ./hack/funclen -exclude '' "$dir"
done

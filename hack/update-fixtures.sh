#!/usr/bin/env bash
# Regenerate the fixture images and snapshot-asset tarballs under testdata/.
# Deterministic: running it twice leaves `git status` clean.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go run ./hack/genfixtures -out testdata "$@"

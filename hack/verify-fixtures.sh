#!/usr/bin/env bash
# Check that testdata/images and testdata/snapshot-assets match what the generator
# produces now: regenerate into a temp dir and diff.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
go run ./hack/genfixtures -out "${tmp}"
status=0
for d in images snapshot-assets microshift-trees microshift/scripts; do
  if ! diff -r -q "testdata/${d}" "${tmp}/${d}"; then
    status=1
  fi
done
if [[ ${status} -ne 0 ]]; then
  echo "testdata fixtures are out of date; run: make fixtures" >&2
  exit 1
fi
echo "fixtures up to date"

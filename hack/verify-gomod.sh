#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The root module, the applier module (its own go.mod, imported by MicroShift), the consumer
# test module shaped like MicroShift and the tools module.
for mod in . applier hack/consumer hack/tools; do
  mkdir -p "$tmp/$mod"
  cp "$mod/go.mod" "$mod/go.sum" "$tmp/$mod/"
  (cd "$mod" && go mod tidy)
  if ! diff -u "$tmp/$mod/go.mod" "$mod/go.mod" || ! diff -u "$tmp/$mod/go.sum" "$mod/go.sum"; then
    cp "$tmp/$mod/go.mod" "$tmp/$mod/go.sum" "$mod/"
    echo "$mod: go.mod/go.sum are not tidy; fix: (cd $mod && go mod tidy)"
    exit 1
  fi
done

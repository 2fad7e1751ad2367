#!/usr/bin/env bash
# Fails when any tracked Go file is not gofmt-clean; prints the files and the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.go' | xargs -r gofmt -l)
if [ -n "$bad" ]; then
  echo "gofmt would change:"; echo "$bad"
  echo "fix: gofmt -w \$(git ls-files '*.go')"
  exit 1
fi

#!/usr/bin/env bash
# Fails when `go mod tidy` would change go.mod or go.sum.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp go.mod go.sum "$tmp/"
go mod tidy
if ! diff -u "$tmp/go.mod" go.mod || ! diff -u "$tmp/go.sum" go.sum; then
  cp "$tmp/go.mod" "$tmp/go.sum" .
  echo "go.mod/go.sum are not tidy; fix: go mod tidy"
  exit 1
fi

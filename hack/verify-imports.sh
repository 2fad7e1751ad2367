#!/usr/bin/env bash
# Keeps the import graph of issue 30: package rebase's files read top-down (no file uses a file
# that uses it back: hack/filegraph) and no package imports its parent — except the module's
# root package, which only embeds base/ and overlays/ (go:embed cannot reach above a package's
# directory, and the kustomize layout keeps them at the repository's root).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
"$GO" run ./hack/filegraph ./rebase
root=$("$GO" list -m)
bad=$("$GO" list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./... |
  awk -v root="$root" '{ for (i = 2; i <= NF; i++) if ($i != root && index($1, $i "/") == 1) print $1 " imports its parent " $i }')
if [ -n "$bad" ]; then
  echo "$bad"
  echo "fix: move what the child needs below it (or under internal/), never up into the parent"
  exit 1
fi
echo "imports: no package imports its parent; package rebase has no cycle of uses between its files"

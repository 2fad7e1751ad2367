#!/usr/bin/env bash
# The applier module's API compatibility check (`make verify`): golang.org/x/exp/cmd/apidiff,
# pinned in hack/tools/go.mod, compares the exported API of every applier package with the last
# release — the newest applier/vX.Y.Z tag, or, before the first tag, the committed snapshot
# hack/applier-api.export — and fails when an incompatible change (an exported identifier removed,
# or its type or signature changed) is not named, in backquotes, in the "## Unreleased" section of
# applier/CHANGELOG.md. Compatible additions pass.
#
#   hack/verify-api.sh            check
#   hack/verify-api.sh -update    rewrite hack/applier-api.export from the working tree (do it
#                                 when tagging a release; RELEASING.md)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
GO="${GO:-go}"
module=github.com/lvms-rebase/lvms-rebase/applier
snapshot=hack/applier-api.export
apidiff="${root}/_output/bin/apidiff"
mkdir -p _output/bin
(cd hack/tools && "$GO" build -o "$apidiff" golang.org/x/exp/cmd/apidiff)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd applier && "$apidiff" -m -w "$tmp/new.export" "$module")
if [ "${1:-}" = "-update" ]; then
	cp "$tmp/new.export" "$snapshot"
	echo "wrote $snapshot"
	exit 0
fi

base=$(git tag --list 'applier/v*' --sort=-v:refname | head -1)
if [ -n "$base" ]; then
	git archive "$base" applier | tar -x -C "$tmp"
	(cd "$tmp/applier" && "$apidiff" -m -w "$tmp/old.export" "$module")
	against="the last release ${base}"
else
	cp "$snapshot" "$tmp/old.export"
	against="${snapshot} (no applier/v* tag yet)"
fi

changes=$("$apidiff" -m -incompatible "$tmp/old.export" "$tmp/new.export")
unreleased=$(awk '/^## /{on = ($0 ~ /^## Unreleased/)} on' applier/CHANGELOG.md)
missing=0
while IFS= read -r line; do
	case "$line" in
	"- "*) ;;
	*) continue ;;
	esac
	ident=${line#- }
	ident=${ident%%: *}
	if ! grep -qF -- "\`${ident}\`" <<<"$unreleased"; then
		echo "applier API: ${line#- }" >&2
		missing=1
	fi
done <<<"$changes"
if [ "$missing" -ne 0 ]; then
	echo "incompatible change(s) against ${against} without an entry naming them in backquotes under '## Unreleased' in applier/CHANGELOG.md" >&2
	exit 1
fi
if [ -n "$changes" ]; then
	echo "applier API: incompatible changes against ${against}, each in applier/CHANGELOG.md:"
	echo "$changes"
else
	echo "applier API: compatible with ${against}"
fi

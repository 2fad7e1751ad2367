#!/usr/bin/env bash
# The linters (`make lint`, part of `make verify`): golangci-lint, pinned in hack/tools/go.mod as
# kind pins its tools, with the checked-in .golangci.yml, over every module of the repository:
# the root module, applier/ and hack/consumer/ (a module shaped like MicroShift that imports the
# applier).
#
# The binary is built once per golangci-lint version and Go version into
# $TOOLS_DIR/golangci-lint-<version>-<go version> (TOOLS_DIR as in the Makefile; .ci/run points it
# at ~/.cache/lvms-rebase-tools), so a repeat run does not rebuild it. A cold build compiles a few
# hundred modules (minutes on 2 cores); the Go version is in the key because the linter must be
# built by a Go at least as new as the code it type-checks.
#
#   hack/verify-golangci-lint.sh               lint every module
#   hack/verify-golangci-lint.sh --fix         also apply the fixes linters suggest
#
# Concurrent runs (several checkouts on one machine) wait for each other around golangci-lint's
# lock (--allow-serial-runners) instead of failing on it.
#
# A second funlen pass holds the rebase run's step methods (package rebase) and the
# applier's preparation steps (package applier) to the preferred 60 lines: each is one unit a
# reader takes in at once. funlen cannot be scoped to named functions, so that pass runs on the
# two packages with .golangci-phases.yml and the lists below pick the findings that count;
# a listed method that is renamed or gone fails too, so the check cannot pass by no longer
# finding it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
GO="${GO:-go}"
TOOLS_DIR="${TOOLS_DIR:-${root}/_output/tools}"

version=$(cd hack/tools && "$GO" list -m -f '{{.Version}}' github.com/golangci/golangci-lint/v2)
lint="${TOOLS_DIR}/golangci-lint-${version}-$("$GO" env GOVERSION)"
if [ ! -x "$lint" ]; then
	echo "building golangci-lint ${version} into ${lint} (once per version)"
	mkdir -p "$TOOLS_DIR"
	# Built to a temporary name and renamed, so an interrupted build leaves no binary behind.
	(cd hack/tools && "$GO" build -o "${lint}.tmp" github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
	mv "${lint}.tmp" "$lint"
fi

status=0
for module in . applier; do
	echo "golangci-lint: ${module}"
	(cd "$module" && "$lint" run --allow-serial-runners --config "${root}/.golangci.yml" "$@" ./...) || status=1
done
# The consumer module builds only in a copy with its assets and the applier replaced; --fix
# would change the copy, so it is linted without it (fix hack/consumer by hand).
echo "golangci-lint: hack/consumer"
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
GO="$GO" hack/consumer-copy.sh "$consumer"
(cd "$consumer" && GOFLAGS=-mod=readonly "$lint" run --allow-serial-runners --config "${root}/.golangci.yml" ./...) || status=1

# The run's step methods in package rebase (the functions of its graph's steps), the
# preparation steps in package applier.
phases='resolve fetchPayloads translate renderLVMS snapshotAssets render images records review write'
steps='readAssets identifyEra gates lvmd resolveImages renderAssets schedule prepareLvmd useLvmd'
held="^func (\(\w+ \*run\) ($(tr ' ' '|' <<<"$phases"))|\(\w+ \*preparation\) ($(tr ' ' '|' <<<"$steps"))|prepare)\("
for name in $phases; do
	grep -qE "^func \(\w+ \*run\) ${name}\(" rebase/*.go ||
		{ echo "rebase: step method (*run).${name} not found; update hack/verify-golangci-lint.sh" >&2; status=1; }
done
for name in $steps prepare; do
	grep -qE "^func (\(\w+ \*preparation\) )?${name}\(" applier/*.go ||
		{ echo "applier: preparation step ${name} not found; update hack/verify-golangci-lint.sh" >&2; status=1; }
done
echo "golangci-lint: phase methods and preparation steps (60 lines)"
phase_pass() { # dir package: every function of the package over 60 lines, exit 0 if any
	(cd "$1" && "$lint" run --allow-serial-runners --config "${root}/.golangci-phases.yml" --issues-exit-code 0 \
		--output.text.print-issued-lines=false "$2")
}
long=$(phase_pass . ./rebase) && long+=$'\n'$(phase_pass applier .) ||
	{ echo "golangci-lint: the 60-line pass failed to run" >&2; exit 1; }
# Each finding is "file:line:col: Function 'name' is too long ..."; it counts when the line
# it points at declares one of the listed methods.
while IFS=: read -r file line _; do
	[ -n "$file" ] || continue
	if sed -n "${line}p" "$file" | grep -qE "$held"; then
		grep -F "${file}:${line}:" <<<"$long" >&2
		echo "  a phase method or preparation step is held to 60 lines: split it" >&2
		status=1
	fi
done < <(grep -E "^[^:]+\.go:[0-9]+:[0-9]+: Function '" <<<"$long" || true)
exit "$status"

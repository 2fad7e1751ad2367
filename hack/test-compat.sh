#!/usr/bin/env bash
# Builds, vets and runs the -short tests of the applier module
#   - "oldest": exactly as committed (-mod=readonly), i.e. at the minimum versions its go.mod
#     requires, which are MicroShift release-4.17's (TestRequirementsFitEveryBranch);
#   - against every client-go minor that MicroShift's LVMS-era branches use (release-4.17's v0.30
#     up to main's v0.36, plus v0.37), the way MicroShift pins its forked staging modules: a
#     temporary copy of applier/ whose go.mod replaces k8s.io/{api,apimachinery,client-go} with
#     that version;
#   - "newest": the direct requirements at the newest release the module proxy serves, the rest at
#     what those require.
#
# COMPAT_MINORS overrides the minors (default "30 33 36 37"); the newest patch the module proxy
# serves is used for each. Module downloads land in GOMODCACHE, so only a cold run downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
MINORS="${COMPAT_MINORS:-30 33 36 37}"
declare -a results=()

# check runs build, vet and the -short tests in the current directory.
check() {
	CGO_ENABLED=0 "$GO" build ./...
	"$GO" vet ./...
	"$GO" test -short -count=1 ./...
}

# in_copy NAME CMD... runs CMD in a temporary copy of applier/.
in_copy() {
	local name=$1
	shift
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp -R applier/. "$tmp/"
	echo "== applier ${name} (${tmp})"
	(cd "$tmp" && "$@")
	rm -rf "$tmp"
	trap - EXIT
}

oldest() {
	# No edit, no tidy: the versions go.mod names are the ones built.
	GOFLAGS=-mod=readonly check
	"$GO" list -m -f '{{.Path}} {{.Version}}' k8s.io/client-go sigs.k8s.io/yaml github.com/fsnotify/fsnotify
}

minor() {
	local version=$1
	export APPLIER_COMPAT_EDITED="client-go ${version}"
	for m in k8s.io/api k8s.io/apimachinery k8s.io/client-go; do
		"$GO" mod edit -replace "${m}=${m}@${version}"
	done
	"$GO" mod tidy
	go_directive_note
	check
}

newest() {
	# The applier's direct requirements at their newest releases, everything else at what those
	# require (minimal version selection, as a MicroShift branch that upgrades them would get).
	# Not "go get -u ./...": that also lifts indirect modules to releases that need a newer Go
	# than the one installed (kube-openapi needing Go 1.27 broke it), which no branch would build.
	export APPLIER_COMPAT_EDITED="direct requirements @latest"
	"$GO" get k8s.io/apimachinery@latest k8s.io/client-go@latest sigs.k8s.io/yaml@latest github.com/fsnotify/fsnotify@latest
	"$GO" mod tidy
	go_directive_note
	check
	"$GO" list -m -f '{{.Path}} {{.Version}}' k8s.io/client-go sigs.k8s.io/yaml github.com/fsnotify/fsnotify
}

go_directive_note() {
	local before after
	before=$(cd "$OLDPWD" && sed -n 's/^go //p' applier/go.mod)
	after=$(sed -n 's/^go //p' go.mod)
	if [ "$before" != "$after" ]; then
		echo "note: the copy's go directive was raised from ${before} to ${after}"
	fi
}

in_copy "at its go.mod's (oldest) versions" oldest
results+=("oldest (go.mod as committed): ok")

all_versions=$(cd applier && "$GO" list -m -versions k8s.io/client-go)
for minor in $MINORS; do
	version=$(tr ' ' '\n' <<<"$all_versions" | grep -E "^v0\.${minor}\.[0-9]+$" | sort -t. -k3,3n | tail -1)
	if [ -z "$version" ]; then
		echo "test-compat: the module proxy serves no k8s.io/client-go v0.${minor}.x" >&2
		exit 1
	fi
	in_copy "with k8s.io/{api,apimachinery,client-go} ${version}" minor "$version"
	results+=("${version}: ok")
done

in_copy "with its direct requirements at their newest release" newest
results+=("newest (direct requirements @latest): ok")
printf '%s\n' "== test-compat" "${results[@]}"

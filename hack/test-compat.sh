#!/usr/bin/env bash
# Builds, vets and runs the -short tests of the applier module against every client-go minor that
# MicroShift's LVMS-era branches use (release-4.17's v0.30 up to main's v0.36, plus v0.37), the way
# MicroShift pins its forked staging modules: a temporary copy of applier/ whose go.mod replaces
# k8s.io/{api,apimachinery,client-go} with that version.
#
# COMPAT_MINORS overrides the minors (default "30 33 36 37"); the newest patch the module proxy
# serves is used for each. Module downloads land in GOMODCACHE, so only a cold run downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
MINORS="${COMPAT_MINORS:-30 33 36 37}"

all_versions=$(cd applier && "$GO" list -m -versions k8s.io/client-go)
declare -a results=()
for minor in $MINORS; do
	version=$(tr ' ' '\n' <<<"$all_versions" | grep -E "^v0\.${minor}\.[0-9]+$" | sort -t. -k3,3n | tail -1)
	if [ -z "$version" ]; then
		echo "test-compat: the module proxy serves no k8s.io/client-go v0.${minor}.x" >&2
		exit 1
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp -R applier/. "$tmp/"
	echo "== applier with k8s.io/{api,apimachinery,client-go} ${version} (${tmp})"
	(
		cd "$tmp"
		for m in k8s.io/api k8s.io/apimachinery k8s.io/client-go; do
			"$GO" mod edit -replace "${m}=${m}@${version}"
		done
		"$GO" mod tidy
		before=$(cd "$OLDPWD" && sed -n 's/^go //p' applier/go.mod)
		after=$(sed -n 's/^go //p' go.mod)
		if [ "$before" != "$after" ]; then
			echo "note: ${version} requires go ${after}; the copy's go directive was raised from ${before}"
		fi
		CGO_ENABLED=0 "$GO" build ./...
		"$GO" vet ./...
		"$GO" test -short -count=1 ./...
	)
	rm -rf "$tmp"
	trap - EXIT
	results+=("${version}: ok")
done
printf '%s\n' "== test-compat" "${results[@]}"

#!/usr/bin/env bash
# Runs the MicroShift-shaped consumer module (hack/consumer, see its doc.go) the way MicroShift
# would build it after docs/embedding.md's patch: in a temporary copy with the assets to embed
# and the applier replaced by this checkout's (hack/consumer-copy.sh),
#   1. its requirements must be MicroShift release-4.17's (applier/testdata/microshift-requirements.txt)
#      for every module both require, with -mod=readonly: requiring the applier moved none;
#   2. go build, go vet and go test run it against the real kube-apiserver harness
#      ($KUBEBUILDER_ASSETS, see `make control-plane`).
# GOTEST_FLAGS is passed to go test (-short skips the control-plane test).
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GO="$GO" hack/consumer-copy.sh "$tmp"
cd "$tmp"
export GOFLAGS=-mod=readonly

# 1. Every module that provides a package to the consumer's build (tests included) and that
#    release-4.17 requires is at release-4.17's version (hack/consumer/go.mod pins them; with
#    -mod=readonly a requirement of the applier's that raised one would fail here or below).
status=0
while read -r path version; do
	want=$(awk -v p="$path" '$1 == "release-4.17" && $2 == p { print $3 }' "${root}/applier/testdata/microshift-requirements.txt")
	if [ -n "$want" ] && [ "$want" != "$version" ]; then
		echo "consumer: ${path} is ${version}, MicroShift release-4.17 requires ${want}" >&2
		status=1
	fi
done < <("$GO" list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u)
[ "$status" -eq 0 ] || exit 1
echo "consumer: every shared module at MicroShift release-4.17's version"

# 2. Build, vet, test.
CGO_ENABLED=0 "$GO" build ./...
"$GO" vet ./...
# shellcheck disable=SC2086
"$GO" test -count=1 ${GOTEST_FLAGS:-} ./...

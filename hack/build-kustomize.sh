#!/usr/bin/env bash
# Builds the stock kustomize CLI (sigs.k8s.io/kustomize/kustomize/v5) from the Go module proxy
# into $OUT_DIR/kustomize, for rebase/render's TestKubectlKustomize: the staging tree a render
# lays out must build to the same bytes with the CLI a maintainer runs as with the in-process
# krusty (same options, nothing only the library sees). kubectl on PATH serves as well; CI has
# none, so `make test` builds this once per version and exports KUSTOMIZE_BIN.
#
# KUSTOMIZE_VERSION is the CLI release built on the kustomize/api the root module requires
# (v5.8.2 is api v0.21.2); the script refuses a CLI whose api differs, so a bump of one without
# the other is caught here instead of as a puzzling parity difference. A cold build takes about
# two minutes on two loaded cores (module downloads included).
#
# The build runs once per version: an existing binary is reported and reused. It is built to a
# temporary name and renamed, so an interrupted build never leaves a half-written binary.
set -euo pipefail

# The version is the Makefile's (KUSTOMIZE_VERSION, its one home): run `make kustomize`.
: "${KUSTOMIZE_VERSION:?set by the Makefile: run make kustomize}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${OUT_DIR:-${ROOT}/_output/tools/kustomize-${KUSTOMIZE_VERSION}}"
GO="${GO:-go}"
bin="${OUT_DIR}/kustomize"

if [[ -x "${bin}" ]]; then
	echo "kustomize already built in ${bin}: $("${bin}" version)"
	exit 0
fi

# The api version the CLI module requires must be the root module's.
want_api="$(cd "${ROOT}" && "${GO}" list -m -f '{{.Version}}' sigs.k8s.io/kustomize/api)"
# go mod download exits non-zero for a module this Go cannot build (its go line) yet names
# the go.mod it fetched; the error is shown if the build below fails on it.
download="$("${GO}" mod download -json "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}" || true)"
cli_mod="$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"${download}")"
if [[ -z "${cli_mod}" || ! -f "${cli_mod}" ]]; then
	echo "build-kustomize: could not download the go.mod of sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}:" >&2
	echo "${download}" >&2
	exit 1
fi
got_api="$(sed -n 's#^[[:space:]]*sigs\.k8s\.io/kustomize/api \(v[^[:space:]]*\).*#\1#p' "${cli_mod}")"
if [[ "${got_api}" != "${want_api}" ]]; then
	echo "build-kustomize: kustomize ${KUSTOMIZE_VERSION} is built on kustomize/api ${got_api:-?}, the root module requires ${want_api}; set KUSTOMIZE_VERSION (Makefile) to the CLI release of ${want_api}" >&2
	exit 1
fi

echo "building kustomize ${KUSTOMIZE_VERSION} (kustomize/api ${got_api}) into ${bin}"
mkdir -p "${OUT_DIR}"
GOBIN_TMP="$(mktemp -d "${OUT_DIR}/.build.XXXXXX")"
trap 'rm -rf "${GOBIN_TMP}"' EXIT
# `go install pkg@version` builds with the CLI's own go.mod; nothing of this repository's
# module graph changes.
CGO_ENABLED=0 GOBIN="${GOBIN_TMP}" GOFLAGS=-trimpath "${GO}" install -ldflags "-s -w" "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}"
mv "${GOBIN_TMP}/kustomize" "${bin}"
echo "kustomize built: $("${bin}" version)"

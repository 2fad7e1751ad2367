#!/usr/bin/env bash
# Builds kube-apiserver and etcd for the real-apiserver tests (applier/controlplanetest) from the Go module proxy only, into $OUT_DIR.
#
# k8s.io/kubernetes is not meant to be required as a module: its go.mod replaces every staging module
# (k8s.io/api, k8s.io/apiserver, ...) with ./staging/..., which the proxy does not serve. The wrapper
# module in hack/control-plane is copied to a temporary directory, where each of those replaces is
# pointed at the published v0.X.Y of the staging module instead. etcd comes from the same module graph
# (go.etcd.io/etcd/server/v3) through a tiny main in hack/control-plane/etcd.
#
# The build runs once per version: when both binaries already exist they are reported and reused. The
# binaries are built into a temporary directory that is renamed onto $OUT_DIR, so an interrupted build
# never leaves a half-populated cache behind.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.0}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${OUT_DIR:-${ROOT}/_output/tools/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}}"
GO="${GO:-go}"

# first_line prints the first line of a command's output; piping into head would kill the
# command with SIGPIPE, which pipefail turns into a failed build.
first_line() {
	local out
	out="$("$@")"
	echo "${out%%$'\n'*}"
}

if [[ -x "${OUT_DIR}/kube-apiserver" && -x "${OUT_DIR}/etcd" ]]; then
	echo "control plane already built in ${OUT_DIR}:"
	"${OUT_DIR}/kube-apiserver" --version
	first_line "${OUT_DIR}/etcd" --version
	exit 0
fi

# Staging modules are published as v0.<minor>.<patch> for kubernetes v1.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

# sum.golang.org is not reachable from the CI network; the module proxy is the only source, so the
# checksum database is off for this throwaway wrapper module unless the caller sets GOSUMDB.
export GOSUMDB="${GOSUMDB:-off}"
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

WORK="$(mktemp -d "${TMPDIR:-/tmp}/lvms-control-plane.XXXXXX")"
mkdir -p "$(dirname "${OUT_DIR}")"
STAGE="$(mktemp -d "$(dirname "${OUT_DIR}")/.build.XXXXXX")"
cleanup() { rm -rf "${WORK}" "${STAGE}"; }
trap cleanup EXIT

cp -R "${ROOT}/hack/control-plane/." "${WORK}/"
cd "${WORK}"

# Read the staging list from kubernetes' own go.mod so a new staging module never breaks the build.
K8S_GOMOD="$("${GO}" mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
if [[ -z "${K8S_GOMOD}" || ! -f "${K8S_GOMOD}" ]]; then
	echo "build-control-plane: could not download the go.mod of k8s.io/kubernetes@${K8S_VERSION}" >&2
	exit 1
fi
mapfile -t STAGING < <(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\1#p' "${K8S_GOMOD}")
if [[ ${#STAGING[@]} -eq 0 ]]; then
	echo "build-control-plane: no staging replaces found in ${K8S_GOMOD}" >&2
	exit 1
fi

edits=(-require "k8s.io/kubernetes@${K8S_VERSION}" -require "go.etcd.io/etcd/server/v3@${ETCD_VERSION}")
for m in "${STAGING[@]}"; do
	edits+=(-replace "${m}=${m}@${STAGING_VERSION}")
done
"${GO}" mod edit "${edits[@]}" -tool k8s.io/kubernetes/cmd/kube-apiserver
"${GO}" mod tidy

echo "building kube-apiserver ${K8S_VERSION} and etcd ${ETCD_VERSION} (${#STAGING[@]} staging modules at ${STAGING_VERSION})"
"${GO}" build -trimpath -o "${STAGE}/kube-apiserver" \
	-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "${K8S_VERSION}" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean" \
	k8s.io/kubernetes/cmd/kube-apiserver
"${GO}" build -trimpath -o "${STAGE}/etcd" -ldflags "-s -w" ./etcd

"${STAGE}/kube-apiserver" --version
first_line "${STAGE}/etcd" --version

# Rename the finished directory into place; a concurrent build that won the race is kept.
if [[ -e "${OUT_DIR}" ]]; then
	rm -rf "${OUT_DIR}.old"
	mv "${OUT_DIR}" "${OUT_DIR}.old"
fi
mv "${STAGE}" "${OUT_DIR}"
rm -rf "${OUT_DIR}.old"
echo "control plane built in ${OUT_DIR}"

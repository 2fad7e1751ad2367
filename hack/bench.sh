#!/usr/bin/env bash
# make bench: a full two-arch `lvms-rebase --ocp X.Y` against a loopback registry shaped like
# the real inputs (payloads with ~150 MB of incompressible filler and a ~2 MB release-manifests
# layer, an ~11 MB snapshot-controller operator archive, all generated at bench time and never
# committed) behind a network model (40 ms per request, 100 Mbit/s): cold, warm, and a
# legacy-shaped pipeline for a ratio (see hack/bench/main.go), then the repository's Go
# benchmarks, briefly. It only measures; it fails only when a run fails.
#
#   BIN=…          lvms-rebase binary (default _output/bin/lvms-rebase, built by make build)
#   BENCH_OUT=…    output directory (default _output/bench; result.json and logs land here)
#   BENCH_FLAGS=…  extra flags for hack/bench, e.g. "-ocp 4.18 -delay 40ms -link-mbps 100 -filler 52428800"
#   GO_BENCH=0     skip the Go benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BIN=${BIN:-_output/bin/lvms-rebase}
OUT=${BENCH_OUT:-_output/bench}
[ -x "$BIN" ] || { echo "bench: $BIN is missing; run make build" >&2; exit 1; }
mkdir -p "$OUT" _output/bin

echo "== two-arch rebase vs the legacy-shaped pipeline, under a network model"
"$GO" build -o _output/bin/bench ./hack/bench
"$GO" build -o _output/bin/bench-rusage ./hack/bench/rusage
# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
_output/bin/bench -bin "$BIN" -rusage _output/bin/bench-rusage -out "$OUT" ${BENCH_FLAGS:-}

[ "${GO_BENCH:-1}" = 0 ] && exit 0
echo
echo "== Go benchmarks (-benchtime 3x)"
pkgs=(./rebase/... ./release/...)
# The applier's benchmarks need etcd and kube-apiserver (make control-plane).
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ]; then
  applier_bench=1
else
  echo "(applier benchmarks skipped: no etcd and kube-apiserver in KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-}; run make control-plane)"
fi
"$GO" test -run '^$' -bench . -benchtime 3x "${pkgs[@]}" | tee "$OUT/go-bench.txt"
# The applier is its own module (applier/go.mod).
if [ "${applier_bench:-0}" = 1 ]; then
  (cd applier && "$GO" test -run '^$' -bench . -benchtime 3x ./...) | tee -a "$OUT/go-bench.txt"
fi
echo
echo "Results: $OUT/result.json, $OUT/go-bench.txt"

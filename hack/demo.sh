#!/usr/bin/env bash
# make demo: the main job against the bundled fixture images, served by a loopback registry.
# Runs `lvms-rebase --ocp 4.17` twice on a copy of testdata/microshift; the second run must
# report no changes.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-_output/bin/lvms-rebase}
REGISTRY=${REGISTRY:-_output/bin/dev-registry}
OCP=${OCP:-4.17}
OUT=_output/demo
CACHE=_output/demo-cache
LOG=$(mktemp)
trap 'kill "${REG_PID:-0}" 2>/dev/null || true; rm -f "$LOG"' EXIT

rm -rf "$OUT" "$CACHE"
mkdir -p "$(dirname "$OUT")"
cp -r testdata/microshift "$OUT"
git -C "$OUT" init -q && git -C "$OUT" add -A && git -C "$OUT" -c user.name=demo -c user.email=demo@localhost commit -qm "MicroShift-like tree before the rebase"

"$REGISTRY" --addr 127.0.0.1:0 >"$LOG" 2>&1 &
REG_PID=$!
for _ in $(seq 1 100); do
  HOST=$(sed -n 's/^ready \([^ ]*\).*/\1/p' "$LOG" | head -1)
  [ -n "$HOST" ] && break
  kill -0 "$REG_PID" 2>/dev/null || { cat "$LOG"; echo "dev-registry exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "${HOST:-}" ] || { cat "$LOG"; echo "dev-registry did not start" >&2; exit 1; }
echo "== fixture registry on $HOST"

run() {
  "$BIN" --ocp "$OCP" --microshift-dir "$OUT" \
    --mirror "registry.redhat.io=$HOST/registry.redhat.io" \
    --mirror "quay.io=$HOST/quay.io" \
    --insecure-registry "$HOST" \
    --mirror "github.com=$HOST/github.com" \
    --cache-dir "$CACHE" "$@"
}

echo "== first run: lvms-rebase --ocp $OCP --microshift-dir $OUT"
run
echo
echo "== changes in $OUT (git status)"
git -C "$OUT" status --short
echo
echo "== second run (must report no changes)"
second=$(run 2>&1 | tee /dev/stderr)
if ! grep -q "no changes" <<<"$second"; then
  echo "demo: the second run changed the tree" >&2
  exit 1
fi
echo
echo "Result: $OUT (lock file: $OUT/scripts/auto-rebase/lvms-rebase.lock.yaml)"

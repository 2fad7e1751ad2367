#!/usr/bin/env bash
# make demo: the main job against the bundled fixture images, served by a loopback registry.
# Runs a plain `lvms-rebase` (no --ocp: the tree's release.base says 5.0; payloads from its
# last_rebase.sh; LVMS 4.21, the newest published) twice on a copy of the generated 5.0
# MicroShift-like tree; the second run must report no changes, then --check must pass. The
# registry signs what it serves with a demo key generated when it starts, and the runs trust it
# through the policy file it prints (--signature-policy), so the PR body shows a Provenance section.
# TREE=testdata/microshift-trees/4.17 (or 4.22) runs another branch.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-_output/bin/lvms-rebase}
REGISTRY=${REGISTRY:-_output/bin/dev-registry}
TREE=${TREE:-testdata/microshift-trees/5.0}
OUT=_output/demo
CACHE=_output/demo-cache
POLICY=_output/demo-policy.json
PRBODY=_output/demo-pr.md
LOG=$(mktemp)
SECOND=$(mktemp)
trap 'kill "${REG_PID:-0}" 2>/dev/null || true; rm -f "$LOG" "$SECOND"' EXIT

rm -rf "$OUT" "$CACHE" "$POLICY" "$PRBODY"
mkdir -p "$(dirname "$OUT")"
cp -r "$TREE" "$OUT"
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
# The policy trusting the registry's demo key lives in the registry's temporary directory; keep a
# copy next to the demo tree (a --check after the registry stopped reads it too).
cp "$(sed -n 's/^signature-policy //p' "$LOG" | head -1)" "$POLICY"

run() {
  "$BIN" --microshift-dir "$OUT" \
    --mirror "registry.redhat.io=$HOST/registry.redhat.io" \
    --mirror "quay.io=$HOST/quay.io" \
    --mirror "registry.ci.openshift.org=$HOST/registry.ci.openshift.org" \
    --insecure-registry "$HOST" \
    --mirror "raw.githubusercontent.com=$HOST/raw.githubusercontent.com" \
    --mirror "storage.googleapis.com=$HOST/storage.googleapis.com" \
    --mirror "mirror.openshift.com=$HOST/mirror.openshift.com" \
    --signature-policy "$POLICY" \
    --cache-dir "$CACHE" "$@"
}

echo "== first run: lvms-rebase --microshift-dir $OUT (tree: $TREE)"
run --pr-body "$PRBODY"
echo
echo "== the PR body's Provenance section ($PRBODY)"
sed -n '/^### Provenance/,/^### /p' "$PRBODY" | sed '$d'
echo
echo "== changes in $OUT (git status)"
git -C "$OUT" status --short
echo
echo "== second run (must report no changes)"
# tee to a file, not /dev/stderr: reopening /dev/stderr truncates a redirected log
# (`make demo > log 2>&1`) and loses the first run's output.
run 2>&1 | tee "$SECOND"
if ! grep -q "no changes" "$SECOND"; then
  echo "demo: the second run changed the tree" >&2
  exit 1
fi
echo
echo "== --check (no other flags: everything comes from the lock)"
run --check
echo
echo "Result: $OUT (lock file: $OUT/scripts/auto-rebase/lvms-rebase.lock.yaml)"

#!/usr/bin/env bash
# On one CUDA GPU (an H200): the `dcuopt` loop end to end and the ablation repeated five times.
#
#   bash tools/device/loop_check.sh            # from the repository root; about 8 minutes (BUDGET_S=480)
#   RUNS=5 SKIP_LOOP=1 bash tools/device/loop_check.sh   # the ablation repeat alone (ABLATE_S, default 45 s a run)
#
# Case: tests/data/cases/ablation_rowsum_cuda (row sums, M = 2048, K = 4096). Baseline: one thread per row.
# Branch block_reduce: one block per row with coalesced reads (removed by -DDCUOPT_ABLATE_REAL) and a placebo
# (removed by -DDCUOPT_ABLATE_PLACEBO).
#   1. ablate: `pytest CASE -k test_ablation` in 5 fresh processes -> $OUT/ablation-repeat.{json,md}: per run the
#      outcome and state bucket of each method (expected: effective / ineffective, 5 of 5).
#   2. loop: setup, open-iter (ncu profile, budget), methods.json proposed from the budget, close-iter (twice with
#      REPEAT_CLOSE=1: the second must take the same decisions), open-iter 2, close-iter, finalize -> $OUT/loop/ (summary.md, plots,
#      state.json, per iteration budget.json, methods.json, attribution.json) and $OUT/loop-summary.json.
# Logs go to $OUT/loop_check.tgz, packed after every step, so a run cut short still returns what it finished.
# Prerequisites as tools/device/sync_check.sh (python3 with CUDA torch, pytest, pytest-benchmark, hypothesis;
# nvcc, ncu; jsonschema's wheels in .whl/).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/loop-out}
W=${W:-/tmp/loop}
BUDGET_S=${BUDGET_S:-480}
RUNS=${RUNS:-5}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
CASE=tests/data/cases/ablation_rowsum_cuda
HARNESS="--dcuopt-max-time=0.3 --dcuopt-min-samples=3 --dcuopt-warmup=0.02 --dcuopt-examples=5 --dcuopt-cache-dir=$W/cache"
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/loop_check.tgz" --exclude=./cache --exclude='*.so' --exclude='*.o' --exclude='*.ncu-rep' . 2>/dev/null; }
source tools/device/steps.sh  # left, step

# REPEAT_CLOSE=1 closes iteration 1 twice (the idempotency check, ~40 s more; the CPU test always does it).
REPEAT=--skip-repeat; [ "${REPEAT_CLOSE:-0}" = 1 ] && REPEAT=
step ablate "${ABLATE_S:-$((RUNS * 45 + 30))}" $PY tools/device/loop_check.py ablate --case "$CASE" --toolchain cuda --times "$RUNS" \
     --work "$W" --out "$OUT" --pytest-args "$HARNESS"
[ "${SKIP_LOOP:-0}" = 1 ] || step loop "${LOOP_S:-300}" $PY tools/device/loop_check.py loop --case "$CASE" --fast "$CASE/branches/block_reduce/kernel.cu" \
     --toolchain cuda --work "$W" --out "$OUT" --pytest-args "$HARNESS" $REPEAT
cat "$OUT/ablation-repeat.md" 2>/dev/null
echo "total: $((SECONDS - START)) s"

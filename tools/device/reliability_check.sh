#!/usr/bin/env bash
# On one CUDA GPU (an H200): work left running on another stream, and a GPU out of memory.
#
#   bash tools/device/reliability_check.sh
#
# Two fixture cases, copied to $W/cases, built once and run by pytest (cuda toolchain):
# - tests/data/cases/other_stream: baseline (a ~2 ms busy wait + y = 2x + 1 on the default stream), nonblocking_stream
#   (the same work on a cudaStreamNonBlocking stream, solve returns at once: must get the verdict "work left running",
#   fail its benchmark and never be champion), blocking_stream (a cudaStreamCreate stream, which the legacy default
#   stream waits for: timed right, verdict "idle");
# - tests/data/cases/device_oom: huge_workspace cudaMallocs 4 TiB: that branch alone fails, naming
#   cudaErrorMemoryAllocation; the baseline passes.
# Then the gated pytester tests of the same (tests/plugin/test_faults_survived.py), if time is left.
# $OUT gets summary.json + summary.md (per branch: correct, median, after-end-event verdict and waits, error) and
# reliability_check.tgz (state.json files, logs), packed after every step. Designed to end within 120 s (BUDGET_S).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/reliability-out}
W=${W:-/tmp/reliability}
BUDGET_S=${BUDGET_S:-115}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/reliability_check.tgz" --exclude=./cache --exclude=./cases . 2>/dev/null; }
STEP_MIN_S=10 STEP_TAIL=25
source tools/device/steps.sh  # left, step
run_case() {  # run_case CASE EXTRA...: one pytest process on a copied case, into $W/<case>-run
  local case=$1; shift
  echo "cd '$W/cases' && $PY -m pytest $case --dcuopt-toolchain=cuda -p no:randomly -p no:cacheprovider -q -rs \
    --dcuopt-cache-dir='$W/cache' --dcuopt-run-dir='$W/$case-run' --dcuopt-examples=3 --dcuopt-max-time=0.3 \
    --dcuopt-warmup=0.05 --dcuopt-interleave=0 $*"
}

rm -rf "$W/cases" && mkdir -p "$W/cases"
cp -r tests/data/cases/other_stream tests/data/cases/device_oom "$W/cases/"
step other_stream 55 bash -c "$(run_case other_stream)"
step device_oom 30 bash -c "$(run_case device_oom -k correctness)"
echo "=== summary"  # outside the budget: it takes a second and is the point of the run
timeout 30 $PY tools/device/reliability_check.py summary --other-stream "$W/other_stream-run/state.json" \
  --oom "$W/device_oom-run/state.json" --out "$OUT/summary.json" --md "$OUT/summary.md" > "$W/summary.log" 2>&1
echo "--- summary: exit $?"; cat "$W/summary.log"
step pytester 45 $PY -m pytest tests/plugin/test_faults_survived.py -q -p no:randomly -p no:cacheprovider -rs \
  -k "non_blocking or out_of_memory"
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"

#!/usr/bin/env bash
# On one CUDA GPU (an H200): synchronizing and allocating solves timed right.
#
#   bash tools/device/sync_check.sh
#
# The case tests/data/cases/sync_solve (y = 2x + 1 at N = 32M; branches: baseline (asynchronous), device_sync
# (cudaDeviceSynchronize in solve), temp_alloc (cudaMalloc/cudaFree of a temporary), d2d_copy (cudaMemcpy
# device-to-device), host_readback (cudaMemcpy of one element to the host)) is copied to $W/cases, built once,
# benchmarked by pytest in $RUNS fresh processes (benchmarks only, one run dir each), and its kernels are timed
# by ncu after the first run (7 calls per branch, --clock-control none, the same builds, dims and inputs). $OUT gets summary.json + summary.md (per branch: method,
# detection verdict, quality, medians per run, max/min, against ncu) and sync_check.tgz (state.json files, logs,
# ncu CSV). Everything is packed after each step, so a run cut short still returns what it finished.
# Prerequisites as tools/device/h200_evidence.sh (python3 with CUDA torch, pytest, pytest-benchmark, hypothesis;
# nvcc, ncu; missing wheels in .whl/). Designed to end within ~8 minutes (BUDGET_S).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sync-out}
W=${W:-/tmp/sync}
RUNS=${RUNS:-5}
RUN_S=${RUN_S:-75}  # the cap of one fresh-process run
SELECT=${SELECT:-benchmark}  # pytest -k of each run, e.g. "benchmark and (device_sync or temp_alloc)"
BUDGET_S=${BUDGET_S:-450}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
REPO=$PWD
DRV="$PY $REPO/tools/device/sync_check.py"
CASE=sync_solve
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/sync_check.tgz" --exclude=./cache --exclude=./cases . 2>/dev/null; }
source tools/device/steps.sh  # left, step
run_case() {  # run_case N: the command of one fresh pytest process, benchmarks only, into $W/runN
  local n=$1
  echo "cd '$W/cases' && $PY -m pytest $CASE --dcuopt-toolchain=cuda -k '$SELECT' -p no:randomly -p no:cacheprovider \
    -q -rs --dcuopt-cache-dir='$W/cache' --dcuopt-max-time=1.0 --dcuopt-interleave=0 --dcuopt-run-dir='$W/run$n' \
    --benchmark-json='$W/run$n-bench.json'"
}

rm -rf "$W/cases" && mkdir -p "$W/cases" && cp -r "tests/data/cases/$CASE" "$W/cases/"
step env 45 $PY tools/device/h200_evidence.py env --out "$W/env.json"
step prebuild 120 $DRV prebuild --case "$W/cases/$CASE" --cache "$W/cache"
step run1 "$RUN_S" bash -c "$(run_case 1)"
# ncu right after the first run, so that a run cut short by the budget still has its reference figures
step ncu 90 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o "$W/ncu" \
     $DRV ncu-target --case "$W/cases/$CASE" --cache "$W/cache" --out "$W/ncu-seq.json"
step ncu-csv 30 bash -c "ncu --import '$W/ncu.ncu-rep' --csv --print-units base > '$W/ncu.csv'"
for i in $(seq 2 "$RUNS"); do
  step "run$i" "$RUN_S" bash -c "$(run_case "$i")"
done
STATES=()
for i in $(seq 1 "$RUNS"); do [ -f "$W/run$i/state.json" ] && STATES+=("$W/run$i/state.json"); done
if [ "${#STATES[@]}" -gt 0 ]; then  # outside the budget: it takes a second and is the point of the run
  echo "=== summary (${#STATES[@]} runs)"
  timeout 60 $DRV summary --states "${STATES[@]}" --ncu "$W/ncu.csv" --seq "$W/ncu-seq.json" \
    --out "$OUT/summary.json" --md "$OUT/summary.md" > "$W/summary.log" 2>&1
  echo "--- summary: exit $?"; tail -n 20 "$W/summary.log"
else
  echo "=== summary: SKIPPED, no run produced a state.json"
fi
step unit 40 $PY -m pytest tests/unit/timing/test_sync.py tests/unit/test_device_timing.py -q -p no:randomly \
     -p no:cacheprovider
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"

#!/usr/bin/env bash
# Small and multi-kernel solves on one CUDA GPU, against ncu: the harness's median in RUNS fresh processes at
# several sizes (5 us to ~90 us on an H200), each size's kernels timed by ncu twice (--cache-control all, ncu's
# default, which flushes before every kernel; and none), plus the calibration's one-element fill.
#
#   bash tools/device/small_kernel_check.sh
#
# Cases (copied to $W/cases, one copy per size, all timed by ONE pytest process per run):
#   sync_<size>: tests/data/cases/sync_solve (y = 2x + 1): baseline (async), device_sync, temp_alloc (2 kernels,
#                cudaMalloc/cudaFree), three_kernels (sync), three_kernels_async
#   vector_add: kernels/vector_add, baseline and float4 (async), at its own GPU bench sizes (l2 = 1M, l2_edge = 4M,
#               hbm = 32M); ncu times copies named vector_add@<size>
# SIZES (default "1m:1048576 3m:3145728 6m:6291456 32m:33554432"). $OUT gets summary.md/json (per branch and size:
# medians per run, max/min, ncu with and without flushes, offsets) and small_kernel_check.tgz (state.json files,
# logs, ncu CSVs). Prerequisites as tools/device/sync_check.sh. PYTEST_ARGS are added to every pytest run.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/small-out}
W=${W:-/tmp/small}
RUNS=${RUNS:-3}
RUN_S=${RUN_S:-100}
BUDGET_S=${BUDGET_S:-420}
SIZES=${SIZES:-"1m:1048576 3m:3145728 6m:6291456 32m:33554432"}
PYTEST_ARGS=${PYTEST_ARGS:-}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
REPO=$PWD
DRV="$PY $REPO/tools/device/sync_check.py"
START=$SECONDS
pack() { tar -C "$W" -czf "$OUT/small_kernel_check.tgz" --exclude=./cache --exclude=./cases . 2>/dev/null; }
source tools/device/steps.sh  # left, step

rm -rf "$W/cases" && mkdir -p "$W/cases"
CASES=()
for spec in $SIZES; do
  size=${spec%%:*}; n=${spec#*:}
  cp -r tests/data/cases/sync_solve "$W/cases/sync_$size"
  rm -rf "$W/cases/sync_$size/branches/d2d_copy" "$W/cases/sync_$size/branches/host_readback"
  echo "{\"N\": $n}" > "$W/cases/sync_$size/dims.json"
  CASES+=("sync_$size")
done
cp -r kernels/vector_add "$W/cases/"
CASES+=(vector_add)
NCU_PATHS=(); for c in "${CASES[@]}"; do [ "$c" != vector_add ] && NCU_PATHS+=("$W/cases/$c"); done
mkdir -p "$W/ncu-cases"
for spec in l2:1048576 l2_edge:4194304 hbm:33554432; do  # the vector_add GPU_SIZES of its ref.py
  copy="$W/ncu-cases/vector_add@${spec%%:*}"; mkdir -p "$copy/branches"
  cp kernels/vector_add/ref.py kernels/vector_add/kernel.cu kernels/vector_add/dims.json "$copy/"
  cp -r kernels/vector_add/branches/float4 "$copy/branches/"
  echo "{\"N\": ${spec#*:}}" > "$copy/dims.cuda.json"
  NCU_PATHS+=("$copy")
done
SELECT="benchmark and not grid_stride and not hip_ and not openmp and not simd and not triton"

run_case() {  # run_case N: one fresh pytest process, benchmarks of every case copy
  echo "cd '$W/cases' && $PY -m pytest ${CASES[*]} --dcuopt-toolchain=cuda -k '$SELECT' -p no:randomly \
    -p no:cacheprovider -q -rs --dcuopt-cache-dir='$W/cache' --dcuopt-max-time=1.0 --dcuopt-interleave=0 \
    --dcuopt-run-dir='$W/run$1' $PYTEST_ARGS"
}
step env 45 $PY tools/device/h200_evidence.py env --out "$W/env.json"
step prebuild 120 $DRV prebuild --case "${NCU_PATHS[@]}" --cache "$W/cache"
step run1 "$RUN_S" bash -c "$(run_case 1)"
step ncu 120 ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --profile-from-start off \
     -f -o "$W/ncu" $DRV ncu-target --tiny --case "${NCU_PATHS[@]}" --cache "$W/cache" --out "$W/ncu-seq.json"
step ncu-csv 30 bash -c "ncu --import '$W/ncu.ncu-rep' --csv --print-units base > '$W/ncu.csv'"
step ncu-none 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum \
     --profile-from-start off -f -o "$W/ncu-none" $DRV ncu-target --tiny --case "${NCU_PATHS[@]}" \
     --cache "$W/cache" --out "$W/ncu-seq-none.json"
step ncu-none-csv 30 bash -c "ncu --import '$W/ncu-none.ncu-rep' --csv --print-units base > '$W/ncu-none.csv'"
for i in $(seq 2 "$RUNS"); do
  step "run$i" "$RUN_S" bash -c "$(run_case "$i")"
done
STATES=()
for i in $(seq 1 "$RUNS"); do [ -f "$W/run$i/state.json" ] && STATES+=("$W/run$i/state.json"); done
if [ "${#STATES[@]}" -gt 0 ]; then
  timeout 60 $DRV summary --states "${STATES[@]}" --ncu "$W/ncu.csv" --ncu-none "$W/ncu-none.csv" \
    --seq "$W/ncu-seq.json" --limit 0.02 --from-us 4 --out "$OUT/summary.json" --md "$OUT/summary.md" \
    > "$W/summary.log" 2>&1
  echo "--- summary: exit $?"; cat "$W/summary.log"
fi
pack
echo "total $((SECONDS - START)) s"

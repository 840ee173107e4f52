#!/usr/bin/env bash
# On one CUDA GPU (an H200): the harness's own cost per branch at real sizes, and the float64 reference on
# the GPU.
#
#   bash tools/device/keeps_up_check.sh
#
# Steps (each a fresh pytest process with --junitxml; every run's state.json keeps, per benchmark test,
# `timing.harness_overhead_s`, `timing.harness_phases_s` and `timing.pre_timing_check_s`):
#   bench1..$RUNS  tests/data/cases/sync_solve (N = 32M, two 128 MiB buffers), benchmarks only (-k benchmark: each
#                  branch is checked at the boundary dims first, as after a deselected correctness test)
#   full           the same case, correctness (3 drawn examples) and benchmarks in one process
#   bench_pageable with PAGEABLE_RUN=1: one more bench run with DCUOPT_PINNED_HOST=0 (pageable host memory)
#   bench_nospare  with NOSPARE_RUN=1: one more bench run with --dcuopt-spare-workers=0 (every worker started cold)
#   mm_cpu, mm_auto  (not with SKIP_MM=1) kernels/matmul's baseline and smem_tiled cuda branches at M=8192, N=6144, K=4096 (float32,
#                  K = 4096 reductions), correctness only, with --dcuopt-reference-device=cpu and =auto
# $OUT gets summary.json + summary.md (tools/device/keeps_up_check.py) and keeps_up_check.tgz (state.json files,
# JUnit XML, logs). Everything is packed after each step. Prerequisites as tools/device/sync_check.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/keeps-up-out}
W=${W:-/tmp/keeps-up}
RUNS=${RUNS:-2}
BUDGET_S=${BUDGET_S:-440}
MM_S=${MM_S:-110}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
REPO=$PWD
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/keeps_up_check.tgz" --exclude=./cache --exclude=./cases --exclude='*.so' . 2>/dev/null; }
source tools/device/steps.sh  # left, step
pytest_in() {  # pytest_in NAME CASE_DIR 'extra pytest arguments': the command of one fresh process into $W/NAME
  echo "cd '$W/cases' && $PY -m pytest $2 --dcuopt-toolchain=cuda -p no:randomly -p no:cacheprovider -q -rs \
    --dcuopt-cache-dir='$W/cache' --dcuopt-run-dir='$W/$1' --junitxml='$W/$1.xml' $3"
}

rm -rf "$W/cases" && mkdir -p "$W/cases"
cp -r tests/data/cases/sync_solve kernels/matmul "$W/cases/"
echo '{"M": 8192, "N": 6144, "K": 4096}' > "$W/cases/matmul/dims.cuda.json"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
nproc >> "$W/gpu.txt"; grep -m1 "model name" /proc/cpuinfo >> "$W/gpu.txt"
if [ "${SKIP_SYNC:-0}" != 1 ]; then  # SKIP_SYNC=1: the matmul reference steps alone
step prebuild 90 $PY tools/device/sync_check.py prebuild --case "$W/cases/sync_solve" --cache "$W/cache"
for i in $(seq 1 "$RUNS"); do
  step "bench$i" 60 bash -c "$(pytest_in "bench$i" sync_solve "-k benchmark --dcuopt-max-time=1.0 --dcuopt-interleave=0")"
done
if [ "${PAGEABLE_RUN:-0}" = 1 ]; then  # one more benchmarks-only run with pageable host memory, for comparison
  step bench_pageable 60 env DCUOPT_PINNED_HOST=0 bash -c "$(pytest_in bench_pageable sync_solve \
    "-k benchmark --dcuopt-max-time=1.0 --dcuopt-interleave=0")"
fi
if [ "${NOSPARE_RUN:-0}" = 1 ]; then  # one more benchmarks-only run with every worker started cold, for comparison
  step bench_nospare 60 bash -c "$(pytest_in bench_nospare sync_solve \
    "-k benchmark --dcuopt-max-time=1.0 --dcuopt-interleave=0 --dcuopt-spare-workers=0")"
fi
step full 90 bash -c "$(pytest_in full sync_solve "--dcuopt-examples=3 --dcuopt-max-time=1.0 --dcuopt-interleave=0")"
fi
[ "${SKIP_MM:-0}" = 1 ] || for mode in cpu auto; do
  step "mm_$mode" "$MM_S" bash -c "$(pytest_in "mm_$mode" matmul "-k 'correctness and (baseline or smem_tiled)' \
    --dcuopt-examples=3 --dcuopt-reference-device=$mode")"
done
echo "=== summary"  # outside the budget: seconds
timeout 60 $PY tools/device/keeps_up_check.py --work "$W" --out "$OUT/summary.json" --md "$OUT/summary.md" \
  > "$W/summary.log" 2>&1
echo "--- summary: exit $?"; tail -n 5 "$W/summary.log"
pack
echo "=== done in $((SECONDS - START)) s"
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"

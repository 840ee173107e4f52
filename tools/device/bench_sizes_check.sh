#!/usr/bin/env bash
# Benchmark sizes on one CUDA GPU (an H200): kernels/vector_add's cuda branches timed at the sizes its
# ref.py declares for GPUs (l2: N = 1Mi, 12 MB moved; l2_edge: 4Mi, 48 MB; hbm: 32Mi, 384 MB).
#
#   bash tools/device/bench_sizes_check.sh
#
# Steps: the cold suite (correctness with 5 drawn examples, then a benchmark test per branch and size), the two small
# sizes again with --dcuopt-hot (the L2 is not flushed: L2 bandwidth rather than the cold start), and the GPU test of
# tests/toolchains/test_cuda.py that reads a size's timing. $OUT gets summary.json + summary.md (per run and size:
# dims, champion; per branch: median, GB/s, speedup, quality, checked timed calls) and bench_sizes_check.tgz (state.json
# and summary.md files, logs). Everything is packed after each step, so a run cut short returns what it finished.
# Prerequisites as tools/device/sync_check.sh (python3 with CUDA torch, pytest, pytest-benchmark, hypothesis, nvcc;
# missing wheels in .whl/). Designed to end within ~8 minutes (BUDGET_S).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/bench-sizes-out}
W=${W:-/tmp/bench-sizes}
BUDGET_S=${BUDGET_S:-460}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/bench_sizes_check.tgz" --exclude=./cache --exclude='./*/logs' . 2>/dev/null; }
STEP_TAIL=25
source tools/device/steps.sh  # left, step
suite() {  # suite RUN_DIR extra pytest arguments...
  local run=$1; shift
  $PY -m pytest kernels/vector_add --dcuopt-toolchain=cuda -p no:randomly -p no:cacheprovider -q -rs \
    --dcuopt-cache-dir="$W/cache" --dcuopt-run-dir="$W/$run" "$@"
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
step cold 260 suite cold --dcuopt-examples=5
step hot 100 suite hot -k benchmark --dcuopt-sizes=l2,l2_edge --dcuopt-hot --dcuopt-interleave=0
step gpu-test 90 $PY -m pytest tests/toolchains/test_cuda.py -q -rs -p no:randomly -p no:cacheprovider \
     -k gpu_suite_times_on_the_device
echo "=== summary"  # outside the budget: it takes a second and is the point of the run
timeout 60 $PY tools/device/bench_sizes_check.py --case vector_add --toolchain cuda \
  --state "cold=$W/cold/state.json" --state "hot=$W/hot/state.json" \
  --out "$OUT/summary.json" --md "$OUT/summary.md" > "$W/summary.log" 2>&1
echo "summary: exit $?" | tee -a "$W/steps.txt"
cp "$W/steps.txt" "$OUT/steps.txt"
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"

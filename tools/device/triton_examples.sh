#!/usr/bin/env bash
# The example suite's Triton branches compiled on one CUDA GPU (an H200), within ~150 s:
#
#   bash tools/device/triton_examples.sh
#
# Runs `pytest kernels --dcuopt-toolchain triton` (correctness with 3 drawn examples, benchmarks, ISA for the
# GPU's own target) on vector_add (triton_block1024, triton_scalar), row_softmax (triton_row) and matmul
# (triton_dot and its variants @m128_n64_k32_w8_s3 and @hinted, each compile-probed for the GPU first).
# $OUT gets triton_examples.md / .json (per branch: correct, median, speedup vs the case's baseline and vs the
# bare branch a variant comes from, probe outcome, compiled kernels' num_warps / num_stages / shared / registers /
# spills) and triton_examples.tgz (logs, state.json, summary.md), packed after every step.
# Prerequisites as tools/device/session_check.sh (python3 with CUDA torch and triton, pytest, pytest-benchmark,
# hypothesis; missing wheels in .whl/).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/triton-examples}
W=${W:-/tmp/triton-examples-work}
BUDGET_S=${BUDGET_S:-150}
mkdir -p "$OUT"; rm -rf "$W"; mkdir -p "$W"
source tools/device/device_env.sh
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/triton_examples.tgz" --exclude=./cache --exclude=./suite/logs . 2>/dev/null; }
STEP_MIN_S=10 STEP_TAIL=12
source tools/device/steps.sh  # left, step

step env 15 bash -c "nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; \
  python3 -c 'import torch, triton; print(\"torch\", torch.__version__, \"triton\", triton.__version__)'"
# 3 drawn examples and 0.5 s of timing per benchmark keep the run inside the budget (a cut-short pytest writes no
# state.json); the build cache starts empty, so every probe and JIT compile is in the figures of this run.
step suite 120 python3 -m pytest kernels --dcuopt-toolchain triton --dcuopt-examples 3 --dcuopt-max-time 0.5 -q -rs \
  -p no:cacheprovider --dcuopt-run-dir "$W/suite" --dcuopt-cache-dir "$W/cache"
step summary 10 python3 tools/device/triton_examples.py "$W/suite/state.json" --out "$OUT"
cp "$W/steps.txt" "$OUT/steps.txt"
pack
echo "total $((SECONDS - START)) s"

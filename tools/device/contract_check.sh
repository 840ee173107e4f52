#!/usr/bin/env bash
# On one CUDA GPU (an H200): the contract cases' CUDA twins get the verdicts of their CPU versions.
#
#   bash tools/device/contract_check.sh
#
# The cases tests/data/cases/contract_* (positional names, rows/cols, a histogram into a zeroed output, an initial
# value, a derived shape, related dims, a K = 4096 float32 matmul, a solve that cudaMallocs a temporary) are copied
# to $W/cases and run by pytest on the cuda toolchain there: correctness with 10 drawn examples, benchmarks disabled.
# $OUT gets contract.md (per case and branch: correct, expected verdict, observed verdict, agree yes/NO, a note),
# contract.json (the same rows) and contract_check.tgz (state.json, pytest log, step logs), packed after each step.
# Prerequisites as tools/device/sync_check.sh (python3 with CUDA torch, pytest, pytest-benchmark, hypothesis; nvcc;
# missing wheels in .whl/). Designed to end within ~3 minutes (BUDGET_S). TOOLCHAIN=cpu runs the kernel.cpp versions
# instead (a dry run of the script on any machine).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/contract-out}
W=${W:-/tmp/contract}
BUDGET_S=${BUDGET_S:-200}
TOOLCHAIN=${TOOLCHAIN:-cuda}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
DRV="$PY tools/device/contract_check.py"
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/contract_check.tgz" --exclude=./cache --exclude=./cases . 2>/dev/null; }
source tools/device/steps.sh  # left, step

step env 20 bash -c "nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -n 2; \
  $PY -c 'import torch; print(\"torch\", torch.__version__, torch.cuda.is_available())'"
# The driver's own pytest timeout (140 s) lies inside this step's, so a slow run still writes its log.
step run 150 $DRV run --toolchain "$TOOLCHAIN" --work "$W" --timeout 140
step summary 20 $DRV summary --state "$W/run/state.json" --toolchain "$TOOLCHAIN" --out "$OUT/contract.json" \
  --md "$OUT/contract.md"
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"
[ -f "$OUT/contract.md" ] && cat "$OUT/contract.md"

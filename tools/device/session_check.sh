#!/usr/bin/env bash
# One device call that checks the whole harness on a CUDA GPU after a round of changes, within ~9 minutes:
#   1. the GPU-gated tests (cuda and triton toolchains, the lazy-kernel check on the device),
#   2. the example suite's cuda and triton branches (correctness with 5 drawn examples, benchmarks),
#   3. the `profile` marker under ncu (tools/device/profile_check.sh).
# Run from the repository root with .whl/ (jsonschema and its deps) and .carry/hip-include carried.
# $OUT gets results.tgz (logs, state.json, summary.md, profile files) and steps.txt (exit status and time per step).
set -uo pipefail
source tools/device/device_env.sh
OUT=${OUT:-/tmp/session-check}; mkdir -p "$OUT"
W=/tmp/session-check-work; rm -rf $W; mkdir -p $W
START=$SECONDS
step() {  # step NAME LIMIT_S command...
  local name=$1 limit=$2; shift 2
  local begin=$SECONDS
  timeout "$limit" "$@" > "$W/$name.log" 2>&1
  local status=$?
  echo "$name: exit $status, $((SECONDS - begin)) s" | tee -a "$W/steps.txt"
  tail -n 6 "$W/$name.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/gpu.txt 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" >> $W/gpu.txt 2>&1
step gpu-tests 200 python3 -m pytest tests/toolchains/test_cuda.py tests/toolchains/test_triton.py \
  tests/plugin/test_faults_survived.py tests/unit/timing/test_sync.py -q -rs -p no:cacheprovider \
  -k "cuda or gpu or device or triton or sync"
step suite 260 python3 -m pytest kernels --dcuopt-toolchain cuda,triton --dcuopt-examples 5 -q -rs \
  -p no:cacheprovider --dcuopt-run-dir $W/suite --dcuopt-cache-dir $W/cache
step profile 150 env OUT=$W/profile bash tools/device/profile_check.sh
cp $W/steps.txt "$OUT/steps.txt"
tar -C $W -czf "$OUT/results.tgz" --exclude=./cache --exclude=./suite/logs . 2>/dev/null
echo "total $((SECONDS - START)) s"

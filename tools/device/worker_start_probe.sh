#!/usr/bin/env bash
# What starting one kernel worker costs on this machine, by part (each a fresh interpreter, 3 times, wall milliseconds):
#   bash tools/device/worker_start_probe.sh
# python alone; numpy and the worker module; torch's import; torch with a CUDA context and one allocation. Every
# branch of a GPU case pays about the last line once per pytest process (its worker's start), before its first call.
# Prints one line per part; $OUT/worker_start.txt keeps them.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/worker-start-out}; mkdir -p "$OUT"
source tools/device/device_env.sh
part() {  # part NAME CODE
  local times=()
  for _ in 1 2 3; do
    local began; began=$(date +%s%N)
    python3 -c "$2" > /dev/null 2>&1 || { echo "$1: failed"; return; }
    times+=("$(( ($(date +%s%N) - began) / 1000000 )) ms")  # integer arithmetic: no bc on some machines
  done
  echo "$1: ${times[*]}" | tee -a "$OUT/worker_start.txt"
}
part python "pass"
part worker_module "import numpy, pytest_dcuopt.run.worker"
part torch_import "import torch"
part torch_cuda_context "import torch; torch.empty(1, device='cuda'); torch.cuda.synchronize()"

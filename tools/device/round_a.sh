#!/usr/bin/env bash
# One device call (<= ~560 s): the example suite's triton branches, the `dcuopt triton` capture workflow, the CUDA
# contract cases, and the profile marker on the matmul branches (compute/latency-bound from counters).
#   bash tools/device/round_a.sh      (from the repository root, .whl/ and .carry/ carried)
set -uo pipefail
OUT=${OUT:-/tmp/round-a}; mkdir -p "$OUT"
START=$SECONDS
part() {  # part NAME LIMIT_S command...: each script gets its own $OUT/NAME
  local name=$1 limit=$2; shift 2
  mkdir -p "$OUT/$name"
  local begin=$SECONDS
  OUT="$OUT/$name" timeout "$limit" "$@" > "$OUT/$name/console.log" 2>&1
  echo "$name: exit $?, $((SECONDS - begin)) s (at $((SECONDS - START)) s)" | tee -a "$OUT/parts.txt"
  tail -n 25 "$OUT/$name/console.log"
}
part triton_examples 135 env BUDGET_S=130 bash tools/device/triton_examples.sh
part triton_capture 165 env BUDGET_S=160 bash tools/device/triton_capture.sh
part contract 150 env BUDGET_S=145 bash tools/device/contract_check.sh
part profile_matmul 100 env CASES=matmul PYTEST_S=90 bash tools/device/profile_check.sh
echo "total $((SECONDS - START)) s"

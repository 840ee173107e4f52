#!/usr/bin/env bash
# `dcuopt compare-timers` on one CUDA GPU: the harness, triton's do_bench, nvbench (cuda.bench, carried in .whl/)
# and ncu, one process each, on sync_solve's asynchronous baseline and its synchronizing twin at N = 1M (~5 us) and on
# vector_add's float4 branch at its GPU dims (32M, ~90 us). $OUT gets each table (compare-timers-<name>.md) and the
# JSON results.
#   bash tools/device/compare_timers_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/timers-out}
W=${W:-/tmp/timers}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
rm -rf "$W/cases" && mkdir -p "$W/cases"
cp -r tests/data/cases/sync_solve "$W/cases/sync_1m" && echo '{"N": 1048576}' > "$W/cases/sync_1m/dims.json"
cp -r kernels/vector_add "$W/cases/"
for spec in ${SPECS:-sync_1m:baseline sync_1m:device_sync vector_add:float4}; do
  case=${spec%%:*}; branch=${spec#*:}
  echo "=== $case/$branch"
  timeout 150 python3 -m pytest_dcuopt.cli.main compare-timers "$W/cases/$case" --branch "$branch" --toolchain cuda \
    --work "$W/$case-$branch" > "$W/$case-$branch.log" 2>&1
  echo "--- exit $?"; tail -n 12 "$W/$case-$branch.log"
  tail -n 12 "$W/$case-$branch.log" > "$OUT/compare-timers-$case-$branch.md"
  cp "$W/$case-$branch/compare-timers.json" "$OUT/compare-timers-$case-$branch.json" 2>/dev/null
done

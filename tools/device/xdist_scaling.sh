#!/usr/bin/env bash
# On a host with more than two cores: the CPU example sweep (every build, correctness check and ISA check,
# nothing timed) with -n 0, 2 and 4, each with a fresh build cache, ROUNDS times:
#   bash tools/device/xdist_scaling.sh
# $OUT/xdist_scaling.md gets one line per run (wall, user and system CPU seconds of pytest and what it waited for,
# the test outcome line, the records in state.json) and the machine's core count.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xdist-scaling-out}; mkdir -p "$OUT"
ROUNDS=${ROUNDS:-2}
WORKERS=${WORKERS:-"0 2 4"}
source tools/device/device_env.sh
MD="$OUT/xdist_scaling.md"
{
  echo "# The CPU example sweep with -n N (tools/device/xdist_scaling.sh)"
  echo
  echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "command: \`python3 -m pytest kernels --dcuopt-toolchain cpu --benchmark-disable -p no:cacheprovider -q -n N --dcuopt-cache-dir <fresh> --dcuopt-run-dir <run>\`"
  echo
  echo "| round | -n | wall s | user s | sys s | outcome | records |"
  echo "|---|---|---|---|---|---|---|"
} > "$MD"
for round in $(seq 1 "$ROUNDS"); do
  for n in $WORKERS; do
    run="$OUT/run_r${round}_n${n}"; cache=$(mktemp -d)
    TIMEFORMAT="%R %U %S"
    { time python3 -m pytest kernels --dcuopt-toolchain cpu --benchmark-disable -p no:cacheprovider -q -n "$n" \
        --dcuopt-cache-dir "$cache" --dcuopt-run-dir "$run" > "$run.log" 2>&1 ; } 2> "$run.time"
    read -r wall user sys < <(tail -n 1 "$run.time")
    outcome=$(grep -E "passed|failed" "$run.log" | tail -n 1 | tr -d '=' | sed 's/^ *//')
    records=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(sum(len(t['branches']) for c in s['cases'].values() for t in c['toolchains'].values()))" "$run/state.json" 2>/dev/null || echo "?")
    echo "| $round | $n | $wall | $user | $sys | $outcome | $records |" | tee -a "$MD"
    rm -rf "$cache"
  done
done

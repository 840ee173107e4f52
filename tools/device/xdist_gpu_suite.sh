#!/usr/bin/env bash
# On a GPU host: the example suite with benchmarks on, `-n 0` and then `-n 2`, each with a fresh build cache
# (so every branch builds, in the background beside the tests), and the two runs' state.json compared record by
# record (tools/compare_runs.py: the same records and verdicts, no two timings on one GPU at once, the medians):
#   CAP_S=280 bash tools/device/xdist_gpu_suite.sh          (K=vector_add: only the tests -k selects)
# $OUT gets n0/ and n2/ (run dirs), n0.log and n2.log (each output line stamped with seconds since the start),
# and xdist_gpu_suite.md (wall and CPU times, the background builds' line, the comparison).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xdist-gpu-suite}; mkdir -p "$OUT"
CAP_S=${CAP_S:-280}
WORKERS=${WORKERS:-"0 2"}
TOOLCHAINS=${TOOLCHAINS:-cuda,triton}
K=${K:-}
SELECT=(); [ -n "$K" ] && SELECT=(-k "$K")
source tools/device/device_env.sh
MD="$OUT/xdist_gpu_suite.md"
{
  echo "# The example suite with -n 0 and -n 2 (tools/device/xdist_gpu_suite.sh)"
  echo
  echo "cores: $(nproc); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  echo
  echo "command: \`python3 -m pytest kernels --dcuopt-toolchain $TOOLCHAINS --dcuopt-examples 5 -v -p no:cacheprovider -n N --dcuopt-cache-dir <fresh> --dcuopt-run-dir <run>${K:+ -k \"$K\"}\`"
  echo
  echo "| -n | wall s | user s | sys s | first result at s | outcome |"
  echo "|---|---|---|---|---|---|"
} > "$MD"
for n in $WORKERS; do
  cache=$(mktemp -d)
  TIMEFORMAT="%R %U %S"
  { time timeout -s TERM "$CAP_S" python3 -m pytest kernels --dcuopt-toolchain "$TOOLCHAINS" --dcuopt-examples 5 -v \
      -p no:cacheprovider -n "$n" --dcuopt-cache-dir "$cache" --dcuopt-run-dir "$OUT/n$n" "${SELECT[@]}" 2>&1 \
      | python3 -c 'import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write(f"{time.time() - t0:8.2f} {line}"); sys.stdout.flush()' > "$OUT/n$n.log" ; } 2> "$OUT/n$n.time"
  read -r wall user sys < <(tail -n 1 "$OUT/n$n.time")
  first=$(grep -m1 -E " (PASSED|FAILED|SKIPPED|ERROR)" "$OUT/n$n.log" | awk '{print $1}')
  outcome=$(grep -E "passed|failed" "$OUT/n$n.log" | tail -n 1 | cut -c10- | tr -d '=' | sed 's/^ *//')
  echo "| $n | $wall | $user | $sys | $first | $outcome |" | tee -a "$MD"
  grep -h "dcuopt: build\|dcuopt: background" "$OUT/n$n.log" | cut -c10- | sed 's/^/    /' >> "$MD"
  rm -rf "$cache"
done
if [ -f "$OUT/n0/state.json" ] && [ -f "$OUT/n2/state.json" ]; then
  echo >> "$MD"
  python3 tools/compare_runs.py "$OUT/n0" "$OUT/n2" --label-a "-n 0" --label-b "-n 2" >> "$MD"
fi
cat "$MD"

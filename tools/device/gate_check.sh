#!/usr/bin/env bash
# On one CUDA GPU (an H200): the gate's false-alarm and detection rates, and two sessions on one GPU.
#
#   bash tools/device/gate_check.sh
#
# The case tests/data/cases/gate_injected (y = 2x + 1 after a chain of dependent FMAs, ~50-70 us at N = 262144;
# $DCUOPT_GATE_SLOW_PERCENT=5 makes the chain 5% longer) is copied to $W/cases and built once. Then:
#   locks     two pytest sessions of kernels/vector_add (cuda benchmarks, 6 branches, A/B on) started at once:
#             no two recorded holds of the GPU's lock overlap, and both state.json files are complete
#   inproc    one process, ROUNDS rounds of three independent measurements through the harness's timing API
#             (workers A, A' and S = A slowed 5%): >= 100 A/A and >= 100 slowed comparisons, each judged by the
#             gate's rule (with its re-measurements) and by pytest-benchmark's median:5% check on the same samples
#   sessions  real pytest sessions as a cross-check: a first A run, then SESSIONS A runs (each gated against the A
#             run before it) and SESSIONS slowed runs (each gated against the last A run); SESSIONS_ONLY=1 runs env,
#             prebuild and this step alone (about 2-3 minutes on an H200)
# $OUT gets summary.json + summary.md (rates, counts, lock check) and gate_check.tgz (state.json files, logs, the
# in-process per-round detail). Everything is packed after each step, so a run cut short still returns what it has.
# Prerequisites as tools/device/sync_check.sh (python3 with CUDA torch, pytest, pytest-benchmark, hypothesis, nvcc;
# missing wheels in .whl/). Ends within about 300 s: the steps share BUDGET_S (285 s), a step past its limit is cut
# and the next ones run while time is left; the judging after them takes seconds.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gate-out}
W=${W:-/tmp/gate}
ROUNDS=${ROUNDS:-110}
SESSIONS=${SESSIONS:-3}
BUDGET_S=${BUDGET_S:-285}
INPROC_S=${INPROC_S:-125}  # the in-process rounds' own budget (they stop early when it is spent)
MAX_TIME=${MAX_TIME:-0.3}  # --max-time of each in-process measurement
TOOLCHAIN=${TOOLCHAIN:-cuda}  # cpu: the same flow on a CPU core (a smoke test of the script; CPU figures are not the gate's H200 figures)
LOCK_CASE=${LOCK_CASE:-kernels/vector_add}  # the case the two concurrent sessions benchmark
LOCKED=$(basename "$LOCK_CASE")
LOCK_DIMS=${LOCK_DIMS:-}  # e.g. '{"N": 4194304}': the lock case's default dims in the copy (a shorter check)
LOCK_ARGS=${LOCK_ARGS:-}  # more pytest options of the two lock sessions, e.g. --dcuopt-sizes=l2,l2_edge
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=${PY:-python3}
REPO=$PWD
DRV="$PY $REPO/tools/device/gate_check.py"
CASE=gate_injected
START=$SECONDS
export DCUOPT_LOCK_DIR="$W/locks"  # this script's sessions share one lock directory, and no one else's

pack() { tar -C "$W" -czf "$OUT/gate_check.tgz" --exclude=./cache --exclude=./cases --exclude='*.so' . 2>/dev/null; }
STEP_TAIL=12
source tools/device/steps.sh  # left, step
session() {  # session NAME PERCENT [BASELINE_NAME]: one fresh pytest process, benchmarks only, into $W/sessions/NAME
  local name=$1 percent=$2 against=${3:-}
  echo "mkdir -p '$W/sessions/$name' && cd '$W/cases' && DCUOPT_GATE_SLOW_PERCENT=$percent $PY -m pytest $CASE --dcuopt-toolchain=$TOOLCHAIN -k benchmark \
    -p no:randomly -p no:cacheprovider -q -rs --dcuopt-cache-dir='$W/cache' --dcuopt-max-time=0.3 \
    --dcuopt-interleave=0 --dcuopt-run-dir='$W/sessions/$name' --benchmark-json='$W/sessions/$name/bench.json' \
    ${against:+--dcuopt-compare='$W/sessions/$against/state.json'}; true"
}
lock_session() {  # lock_session NAME: the lock case's benchmarks with the A/B, into $W/NAME
  echo "cd '$W/cases' && $PY -m pytest $LOCKED --dcuopt-toolchain=$TOOLCHAIN -k benchmark -p no:randomly \
    -p no:cacheprovider -q --dcuopt-cache-dir='$W/cache' --dcuopt-max-time=0.5 --dcuopt-run-dir='$W/$1' $LOCK_ARGS"
}

rm -rf "$W/cases" "$W/sessions" "$W/lock_a" "$W/lock_b" && mkdir -p "$W/cases" "$W/sessions"
cp -r "tests/data/cases/$CASE" "$LOCK_CASE" "$W/cases/"
if [ -n "$LOCK_DIMS" ]; then  # the toolchain's own dims file when the case has one, else dims.json
  dims_file="$W/cases/$LOCKED/dims.$TOOLCHAIN.json"; [ -f "$dims_file" ] || dims_file="$W/cases/$LOCKED/dims.json"
  echo "$LOCK_DIMS" > "$dims_file"; echo "lock case dims: $LOCK_DIMS in $dims_file"
fi
step env 40 $PY tools/device/h200_evidence.py env --out "$W/env.json"
# Build both cases once (the sessions and the in-process workers then find every branch in the cache). The test
# names, not `isa`: a branch with an isa mark carries the marker on its benchmark tests too.
step prebuild 90 bash -c "cd '$W/cases' && $PY -m pytest $CASE $LOCKED --dcuopt-toolchain=$TOOLCHAIN -k 'test_isa or \
  test_correctness' -p no:randomly -p no:cacheprovider -q --dcuopt-examples=5 --dcuopt-cache-dir='$W/cache' \
  --dcuopt-run-dir='$W/prebuild'"
[ "${SESSIONS_ONLY:-0}" = 1 ] || step locks ${LOCKS_S:-60} bash -c "( $(lock_session lock_a) ) > '$W/lock_a.log' 2>&1 & ( $(lock_session lock_b) ) \
  > '$W/lock_b.log' 2>&1 & wait; $DRV locks --states '$W/lock_a/state.json' '$W/lock_b/state.json' \
  --out '$W/locks.json'"
PAIRS=()
if [ "${LOCKS_ONLY:-0}" != 1 ]; then  # LOCKS_ONLY=1: env, prebuild and the two-session lock check alone
[ "${SESSIONS_ONLY:-0}" = 1 ] || step inproc $((INPROC_S + 25)) $DRV measure --case "$W/cases/$CASE" --toolchain "$TOOLCHAIN" --cache "$W/cache" --work "$W/inproc" \
     --out "$W/inproc.json" --rounds "$ROUNDS" --percent 5 --max-time "$MAX_TIME" --budget "$INPROC_S"
step session_a0 25 bash -c "$(session a0 0)"
previous=a0
for i in $(seq 1 "$SESSIONS"); do
  step "session_a$i" 25 bash -c "$(session "a$i" 0 "$previous")"
  PAIRS+=(--pair aa "$W/sessions/$previous" "$W/sessions/a$i")
  step "session_s$i" 25 bash -c "$(session "s$i" 5 "a$i")"
  PAIRS+=(--pair slowed "$W/sessions/a$i" "$W/sessions/s$i")
  previous=a$i
done
fi
# Outside the budget: seconds each, and the point of the run.
echo "=== judging"
[ "${#PAIRS[@]}" -gt 0 ] && timeout 60 $DRV sessions "${PAIRS[@]}" --out "$W/sessions.json" > "$W/sessions.log" 2>&1
timeout 60 $DRV summary --measure "$W/inproc.json" --sessions "$W/sessions.json" --locks "$W/locks.json" \
  --env "$W/env.json" --out "$OUT/summary.json" --md "$OUT/summary.md" > "$W/summary.log" 2>&1
echo "--- summary: exit $?"; tail -n 5 "$W/summary.log"
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"
[ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"

#!/usr/bin/env bash
# Evidence for docs/gpu-timing.md, taken on one H200 (or any CUDA GPU with nvcc, ncu and cuobjdump).
#
#   bash tools/device/h200_evidence.sh A   # suite run 1 (correctness + benchmarks), extras, ncu fidelity, GPU tests
#   bash tools/device/h200_evidence.sh B   # suite runs 2-5 (benchmarks) for stability, pytest-benchmark compare
#   bash tools/device/h200_evidence.sh C   # runs 1-3 (benchmarks) + extras + ncu fidelity   } the same, split into two
#   bash tools/device/h200_evidence.sh D   # runs 4-5 + the stability table over runs 1-5    } shorter jobs
#   bash tools/device/h200_evidence.sh F   # runs 1-2 + extras + ncu fidelity                 } the same again in
#   bash tools/device/h200_evidence.sh G   # runs 3-4                                          } three calls of
#   bash tools/device/h200_evidence.sh H   # run 5, the stability table over runs 1-5, GPU tests } under 10 minutes
#
# Outputs go to $W (default /tmp/h200) and are packed into $OUT/evidence_<phase>.tgz after every step,
# so a run cut short still returns what it finished. B and D read the earlier runs' state.json files and
# pytest-benchmark storage from $PRIOR (an unpacked evidence folder) when they run on a fresh machine.
# Machine prerequisites: python3 with torch (CUDA), pytest, pytest-benchmark, hypothesis; nvcc, ncu,
# cuobjdump. Missing Python wheels may sit in .whl/ (installed to /tmp/site); HIP's headers, when the
# machine has none, in .carry/hip-include/hip (DCUOPT_HIP_INCLUDE).
set -uo pipefail
cd "$(dirname "$0")/../.."
PHASE=${1:-A}
OUT=${OUT:-/tmp/h200-out}
W=${W:-/tmp/h200}
BUDGET_S=${BUDGET_S:-570}
mkdir -p "$OUT" "$W"
source tools/device/device_env.sh
PY=python3
EV="$PY tools/device/h200_evidence.py"
SUITE=(kernels --dcuopt-toolchain=cuda -p no:randomly -p no:cacheprovider -q -rs "--dcuopt-cache-dir=$W/cache"
       --dcuopt-max-time=1.0 --dcuopt-examples=15 --dcuopt-interleave=0 "--benchmark-storage=file://$W/bench")
START=$SECONDS

pack() { tar -C "$W" -czf "$OUT/evidence_$PHASE.tgz" --exclude=./cache . 2>/dev/null; }
STEP_MIN_S=20 STEP_TAIL=25
source tools/device/steps.sh  # left, step

run_suite() {  # run_suite N [-k EXPR]: one suite run into $W/runN, saved in pytest-benchmark's storage as runN
  local n=$1; shift
  local extra=()
  [ "$n" = 5 ] && extra=(--benchmark-compare=0001 "--benchmark-histogram=$W/histogram")
  step "run$n" 330 $PY -m pytest "${SUITE[@]}" "$@" "--dcuopt-run-dir=$W/run$n" "--benchmark-json=$W/run$n-bench.json" \
       "--benchmark-save=run$n" "${extra[@]}"
}
fidelity_steps() {
  step extras 150 $EV extras --state "$W/run1/state.json" --cache "$W/cache" --out "$W/extras.json"
  step ncu 150 ncu --clock-control none --metrics gpu__time_duration.sum --profile-from-start off -f -o "$W/ncu" \
       $EV ncu-target --state "$W/run1/state.json" --cache "$W/cache" --out "$W/ncu-seq.json"
  step ncu-csv 60 bash -c "ncu --import '$W/ncu.ncu-rep' --csv --print-units base > '$W/ncu.csv'"
  step fidelity 60 $EV fidelity --state "$W/run1/state.json" --ncu "$W/ncu.csv" --seq "$W/ncu-seq.json" \
       --extras "$W/extras.json" --out "$W/fidelity.json"
}
gpu_tests() {
  step tests 200 $PY -m pytest tests/toolchains/test_cuda.py tests/unit/test_device_timing.py tests/unit/test_sass.py \
       -q -rs -p no:randomly -p no:cacheprovider
}
stability() {
  local states=()
  for i in 1 2 3 4 5; do
    for candidate in "$W/run$i/state.json" "${PRIOR:-/nonexistent}/run$i/state.json"; do
      [ -f "$candidate" ] && { states+=("$candidate"); break; }
    done
  done
  step stability 60 $EV stability "${states[@]}" --out "$W/stability.json"
}
if [ -n "${PRIOR:-}" ] && [ -d "$PRIOR/bench" ]; then mkdir -p "$W/bench" && cp -r "$PRIOR/bench/." "$W/bench/"; fi

case "$PHASE" in
  A)  # everything that needs one run: correctness + benchmarks, fidelity, extras, the GPU tests
      step env 60 $EV env --out "$W/env.json"
      run_suite 1 -k "correctness or benchmark"
      fidelity_steps
      gpu_tests ;;
  B)  # stability: runs 2-5 (PRIOR=<folder of phase A's results> when A ran on another machine)
      for i in 2 3 4 5; do run_suite "$i" -k benchmark; done
      stability ;;
  C)  # what fits one 10-minute call: runs 1-3 (benchmarks), fidelity and extras on run 1
      step env 60 $EV env --out "$W/env.json"
      step prebuild 120 $EV prebuild --cache "$W/cache"
      run_suite 1 -k benchmark
      fidelity_steps
      for i in 2 3; do run_suite "$i" -k benchmark; done ;;
  D)  # runs 4-5 and the stability table over runs 1-5 (PRIOR=<folder of phase C's results> on a fresh machine)
      for i in 4 5; do run_suite "$i" -k benchmark; done
      stability ;;
  F)  # runs 1-2 with extras and ncu fidelity on run 1 (suite runs of ~3 min each)
      step env 60 $EV env --out "$W/env.json"
      step prebuild 120 $EV prebuild --cache "$W/cache"
      run_suite 1 -k benchmark
      fidelity_steps
      run_suite 2 -k benchmark ;;
  G)  for i in 3 4; do run_suite "$i" -k benchmark; done ;;
  H)  # run 5, stability over runs 1-5 (PRIOR=<folder holding earlier runs> on a fresh machine), the GPU tests
      run_suite 5 -k benchmark
      stability
      gpu_tests ;;
  E)  # fidelity and extras on an existing run 1, then run 3 (used after C when its fidelity steps failed)
      fidelity_steps
      run_suite 3 -k benchmark ;;
  *)  echo "usage: $0 A|B|C|D|E|F|G|H" >&2; exit 2 ;;
esac
pack
echo "=== done in $((SECONDS - START)) s; $OUT:"; ls -la "$OUT"

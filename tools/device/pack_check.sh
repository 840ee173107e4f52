#!/usr/bin/env bash
# `dcuopt pack` on a device host, as a person whose GPU is on another machine runs it (docs/loop.md "Remote
# devices"). From the repository root:
#
#   bash tools/device/pack_check.sh PACK.tar.gz     # 1. and 2. below
#   bash tools/device/pack_check.sh                 # 2. only
#
# 1. PACK (made elsewhere, e.g. `bash tools/device/make_pack.sh .pack/rowsum_cuda.pack.tar.gz` on a machine without
#    a GPU) unpacked in a scratch folder and its run.sh run with python3, which need not have pytest_dcuopt: the pack
#    carries it. $OUT gets <pack>-results.tar.gz (bring it back and `dcuopt ingest` it where the pack was made) and
#    pack-check.json (run.sh's exit status, remote.json: which pytest_dcuopt ran; steps.json).
# 2. (LOOP=0 skips it) two iterations of the loop and finalize with every device step packed, on CASE (default the
#    CUDA fixture tests/data/cases/ablation_rowsum_cuda; FAST its branch block_reduce): this checkout with the GPU
#    hidden plays the machine that writes the kernels, run.sh with python3 in a folder of its own the device host.
#    Each pack is made here, run there, ingested here: the case (`setup --preflight-from`); `pack --profile` between
#    two `open-iter --ingested` (the best's profile and budget, from there); methods.json and two branches, `pack
#    --iter 1` (measurement, champion, its ablation, its ncu profile), `close-iter --ingested`; `open-iter
#    --ingested` 2 (its profile: the champion's, from there), both branches the baseline, `pack --iter 2`,
#    `close-iter --ingested`; `pack --final` (the head-to-head), `finalize --ingested`. $OUT gets pack-loop.json
#    (each step, where each profile came from, the methods' buckets, where the ablation and profile were measured,
#    whether close-iter left the ingested files alone, the history, the head-to-head), iterv1-profile-results.tar.gz,
#    iterv1-results.tar.gz, iterv2-results.tar.gz, state.json, summary.md, iterv1-attribution.json,
#    iterv2-attribution.json, iterv1-champion_profile.json, final-head_to_head.json (12 files in all with step 1).
#
# Time: at most RUN_S (240) + LOOP_S (330) seconds, inside one 600 s device command.
# Needs: python3 with pytest, pytest-benchmark, hypothesis, numpy, xxhash, torch (the device image has them) and
# jsonschema, which the device image lacks: carry its wheels in .whl/ (jsonschema, jsonschema-specifications,
# referencing, rpds-py; see tools/device/loop_check.sh); nvcc and ncu. TOOLCHAIN=cpu CASE=tests/data/cases/
# ablation_rowsum FAST=.../branches/unrolled/kernel.cpp REAL_FLAG=-DDCUOPT_NO_UNROLL PLACEBO_FLAG=-DDCUOPT_NO_PLACEBO
# runs step 2 on a CPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/pack-check-out}
W=${W:-/tmp/pack-check}
PY=${PY:-python3}
mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
# Carried wheels only: the checkout is NOT put on PYTHONPATH (run.sh must run the packed plugin).
if ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
if ! "$PY" -c "import jsonschema, xxhash, pytest_benchmark, hypothesis" 2>/dev/null; then
  echo "pack_check: $PY lacks a dependency of pytest_dcuopt (jsonschema on the device image). Here, in the repository"
  echo "root: python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\"
  echo "  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \\"
  echo "  jsonschema jsonschema-specifications referencing rpds-py    # then carry .whl"
  exit 3
fi
START=$SECONDS
status=0
if [ $# -ge 1 ]; then
  echo "=== run.sh of $1 with $PY"
  timeout "${RUN_S:-240}" "$PY" tools/device/pack_check.py run --archive "$1" --work "$W" --out "$OUT" --python "$PY"
  status=$?
  echo "--- pack run: exit $status after $((SECONDS - START)) s"
fi
if [ "${LOOP:-1}" = 1 ]; then
  CASE=${CASE:-tests/data/cases/ablation_rowsum_cuda}
  FAST=${FAST:-$CASE/branches/block_reduce/kernel.cu}
  HARNESS=${HARNESS:-"--dcuopt-max-time=0.3 --dcuopt-min-samples=3 --dcuopt-warmup=0.02 --dcuopt-examples=5 --dcuopt-cache-dir=$W/cache"}
  echo "=== two iterations and finalize, every device step packed ($CASE, ${TOOLCHAIN:-cuda})"
  timeout "${LOOP_S:-330}" "$PY" tools/device/pack_check.py loop --case "$CASE" --toolchain "${TOOLCHAIN:-cuda}" \
    --fast "$FAST" --work "$W/loop" --out "$OUT" --python "$PY" --pytest-args "$HARNESS" \
    ${REAL_FLAG:+"--real-flag=$REAL_FLAG"} ${PLACEBO_FLAG:+"--placebo-flag=$PLACEBO_FLAG"}
  loop_status=$?
  echo "--- loop: exit $loop_status after $((SECONDS - START)) s"
  [ "$status" = 0 ] && status=$loop_status
fi
exit "$status"

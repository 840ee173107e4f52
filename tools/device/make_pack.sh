#!/usr/bin/env bash
# The pack that tools/device/pack_check.sh runs on a GPU, made on any machine (no GPU needed): the CUDA fixture
# tests/data/cases/ablation_rowsum_cuda (baseline and branch block_reduce: correctness, benchmarks, the A/B, the
# ablation of block_reduce, the ncu profiles and SASS checks) packed for the cuda toolchain. From the repository root:
#
#   bash tools/device/make_pack.sh [OUTPUT]    # default .pack/ablation_rowsum_cuda.pack.tar.gz
#
# .pack/ is git-ignored: a device run that reads the pack from there names it in `carry` (with .whl for jsonschema).
# Then, on the GPU machine: `bash tools/device/pack_check.sh OUTPUT` (it copies <pack>-results.tar.gz back), and
# here, from the same checkout (ingest checks that the case's files are those that were packed):
#
#   dcuopt ingest tests/data/cases/ablation_rowsum_cuda ablation_rowsum_cuda.pack-results.tar.gz --into /tmp/rowsum_cuda
#   dcuopt setup tests/data/cases/ablation_rowsum_cuda --preflight-from /tmp/rowsum_cuda --run-dir /tmp/rowsum_cuda_run
#
# CASE and TOOLCHAIN pick another case; HARNESS the harness options of the run there.
set -euo pipefail
cd "$(dirname "$0")/../.."
CASE=${CASE:-tests/data/cases/ablation_rowsum_cuda}
TOOLCHAIN=${TOOLCHAIN:-cuda}
OUTPUT=${1:-.pack/$(basename "$CASE").pack.tar.gz}
HARNESS=${HARNESS:-"--dcuopt-max-time=0.3 --dcuopt-min-samples=3 --dcuopt-warmup=0.02 --dcuopt-examples=5 --dcuopt-cache-dir=/tmp/pack-cache"}
PY=${PY:-python3}
mkdir -p "$(dirname "$OUTPUT")"
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m pytest_dcuopt.cli.main pack "$CASE" --toolchain "$TOOLCHAIN" \
  --pytest-args "$HARNESS" -o "$OUTPUT"

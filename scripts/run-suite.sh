#!/usr/bin/env bash
# The main job: run the example kernel suite (correctness + benchmarks), write state.json and summary.md.
# Extra arguments go to pytest, e.g. `bash scripts/run-suite.sh --dcuopt-toolchain cpu -k vector_add`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
# With no AMD device, build HIP kernels for gfx90a (the nearest upstream relative of the DCU ISA) so their ISA
# checks still run; a device or --dcuopt-arch wins over this.
export DCUOPT_HIP_COMPILE_ARCH=${DCUOPT_HIP_COMPILE_ARCH:-gfx90a}
exec .venv/bin/python -m pytest kernels -q "$@"

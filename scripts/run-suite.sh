#!/usr/bin/env bash
# The main job: run the example kernel suite (correctness + benchmarks), write state.json and summary.md.
# Extra arguments go to pytest, e.g. `bash scripts/run-suite.sh --dcuopt-backend cpu -k vector_add`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
exec .venv/bin/python -m pytest kernels -q "$@"

#!/usr/bin/env bash
# The project's own tests (unit, pytester end-to-end, toolchain tests gated by what the machine has).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
exec .venv/bin/python -m pytest tests -q -rfEs "$@"

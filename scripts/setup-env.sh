#!/usr/bin/env bash
# Prepare a fresh machine: system compilers (Debian/apt) and a Python virtual environment in .venv.
# Idempotent: a second run only checks. Used by run-suite.sh, run-tests.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(g++ binutils)
# Extra system packages other toolchains need (one per line, '#' comments) live here:
if [ -f scripts/apt-packages.txt ]; then
  while read -r pkg; do [ -n "$pkg" ] && apt_packages+=("$pkg"); done < <(sed 's/#.*//' scripts/apt-packages.txt)
fi
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup-env: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup-env: missing system packages ${missing[*]}; install them (apt-get install ${missing[*]}) or the toolchains that need them will skip" >&2
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup-env: creating the virtual environment .venv ($("$python" --version 2>&1))"
  "$python" -m venv .venv
fi
stamp=.venv/.dcuopt-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/requirements.txt -nt "$stamp" ]; then
  # Each step says what it does: the whole install takes a minute or more on a fresh machine.
  echo "setup-env: [1/3] upgrading pip in .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  # torch is pinned: a bare "torch" pulls a multi-GB CUDA build; 2.13.0 resolves to the CPU build here.
  echo "setup-env: [2/3] installing the Python packages of scripts/requirements.txt (torch CPU build, pytest, hypothesis, ...)"
  .venv/bin/python -m pip install --progress-bar on -r scripts/requirements.txt
  echo "setup-env: [3/3] installing pytest_dcuopt itself (editable: pip install -e .)"
  .venv/bin/python -m pip install --progress-bar on -e .
  touch "$stamp"
  echo "setup-env: done; run \`source .venv/bin/activate\` to use pytest directly, or call .venv/bin/python -m pytest"
else
  echo "setup-env: .venv is up to date (delete $stamp to reinstall)"
fi

# Sourced by the device evidence scripts (from the repository root): Python wheels carried in .whl/
# (installed to /tmp/site), the checkout on PYTHONPATH (and the plugin registered when it is not
# pip-installed), and HIP's headers from .carry/hip-include when the machine has none.
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import importlib.metadata as m; m.version('pytest-dcuopt')" 2>/dev/null || export PYTEST_PLUGINS=pytest_dcuopt.plugin
if [ ! -f /usr/include/hip/hip_runtime.h ] && [ -d .carry/hip-include/hip ]; then
  export DCUOPT_HIP_INCLUDE="$PWD/.carry/hip-include"
fi

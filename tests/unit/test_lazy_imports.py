from __future__ import annotations

import subprocess
import sys


def test_loading_the_plugin_imports_no_heavy_toolchain_module() -> None:
    """pytest loads the plugin in every run; torch/triton must only be imported when a kernel needs them."""
    code = ("import sys, pytest_dcuopt.plugin, pytest_dcuopt.collect, pytest_dcuopt.session; "
            "print(sorted(m for m in ('torch', 'triton', 'hip') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"

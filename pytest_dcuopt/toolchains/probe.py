"""Device probes: a small Python script run in a fresh interpreter, so pytest never opens a GPU context."""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..external_tools import run_tool

# The start of the cuda and hip device probes: a torch that cannot be imported is the probe's answer, not a crash.
# It ends without a newline, so a probe goes on at the next line of `IMPORT_TORCH + r"""`.
IMPORT_TORCH = r"""
import json
try:
    import torch
except Exception as exc:
    print(json.dumps({"device": None, "reason": f"torch cannot be imported ({type(exc).__name__}: {exc})"}))
    raise SystemExit"""

# `name = value` or `name: Optional[str] = value` at the start of a line of torch/version.py
_TORCH_ASSIGNMENT_RE = re.compile(r"^(\w+)\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.M)


def python_probe(script: str, timeout: float) -> dict[str, Any]:
    """Run `script` in a fresh Python (this interpreter) and read the JSON object it prints last.

    Device probes run this way so the pytest process never opens a GPU context of its own. A probe that
    prints no JSON (torch crashed, the probe timed out) yields {"device": None, "reason": why}.
    """
    result = run_tool([sys.executable, "-c", script], timeout=timeout)
    for line in reversed(result.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return dict(json.loads(line))
            except json.JSONDecodeError:
                break
    return {"device": None, "reason": f"probing the device with torch failed (exit {result.returncode}): "
                                      f"{(result.stderr or result.stdout).strip()[-500:]}"}


def torch_build() -> dict[str, str | None] | None:
    """The assignments of torch/version.py (`__version__`, `cuda`, `hip`, ...), read without importing torch.

    Importing torch costs seconds, and the pytest process must not open a device. Values are unquoted, a bare
    `None` is None. None when torch is not installed; OSError when its version.py cannot be read.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    text = (Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text()
    return {m.group(1): _unquote(m.group(2)) for m in _TORCH_ASSIGNMENT_RE.finditer(text)}


def _unquote(value: str) -> str | None:
    return None if value == "None" else value.strip("'\"")

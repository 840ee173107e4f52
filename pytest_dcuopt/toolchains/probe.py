"""Device probes: a small Python script run in a fresh interpreter, so pytest never opens a GPU context."""
from __future__ import annotations

import json
import sys
from typing import Any

from ..tool import run_tool


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

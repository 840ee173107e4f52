"""`dcuopt triton env`: what the machine offers the Triton workflow, to JSON.

torch and triton are asked in a subprocess (this process never opens a GPU context): their versions, the HIP or
CUDA runtime torch was built with, and each device's name and arch (gcnArchName on ROCm/DTK, sm_XY on NVIDIA).
Tools are looked up on PATH (and DTK's folders for dccobjdump). The environment variables that change what
Inductor and Triton generate are recorded as set, or as unset. AMDGCN_USE_BUFFER_OPS is recorded, never set:
forcing it has broken LLVM lowering on some DCU stacks, so it is an experiment to run only after a compile probe.
"""
from __future__ import annotations

import os
from typing import Any

from ..report.machine import now
from ..toolchains.probe import python_probe
from ..toolchains.tool_finders import TOOL_FINDERS

RECORDED_ENV = ("AMDGCN_USE_BUFFER_OPS", "TORCH_LOGS", "TORCHINDUCTOR_TRACE", "TORCHINDUCTOR_CACHE_DIR",
                "TORCHINDUCTOR_BENCHMARK_KERNEL", "TORCHINDUCTOR_MAX_AUTOTUNE", "TRITON_CACHE_DIR",
                "TRITON_HIP_CLANG_PATH", "ROCM_PATH", "DCUOPT_TRITON_CAPTURE")
TOOLS = ("hipcc", "hipprof", "dccobjdump", "rocminfo", "rocm-smi", "nvcc", "ncu", "cuobjdump")
PROBE = r"""
import json
found = {}
try:
    import torch
    found["torch"] = torch.__version__
    found["hip"] = getattr(torch.version, "hip", None)
    found["cuda"] = torch.version.cuda
    devices = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            hip = getattr(torch.version, "hip", None)
            arch = props.gcnArchName.split(":")[0] if hip else f"sm_{props.major}{props.minor}"
            devices.append({"index": index, "name": props.name, "arch": arch,
                            "memory_mb": props.total_memory // 2**20, "multiprocessors": props.multi_processor_count})
    found["devices"] = devices
except Exception as exc:
    found["torch_error"] = f"{type(exc).__name__}: {exc}"
try:
    import triton
    found["triton"] = triton.__version__
except Exception as exc:
    found["triton_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(found))
"""


def probe(timeout: float = 180) -> dict[str, Any]:
    python = python_probe(PROBE, timeout=timeout)
    tools = {name: TOOL_FINDERS[name]() for name in TOOLS}
    gaps = [f"{key}: {python[key]}" for key in ("torch_error", "triton_error", "reason") if python.get(key)]
    if not python.get("devices"):
        gaps.append("no GPU visible to torch: capture, run and the fallback timing need one")
    gaps += [f"{name} not found" for name, path in tools.items() if path is None]
    return {"created_at": now(), "python": {k: v for k, v in python.items() if k != "device"},
            "env": {name: os.environ.get(name) for name in RECORDED_ENV},
            "tools": tools, "not_available": gaps}


def describe(env: dict[str, Any]) -> list[str]:
    python = env["python"]
    lines = [f"torch {python.get('torch', 'missing')} (hip {python.get('hip')}, cuda {python.get('cuda')}), "
             f"triton {python.get('triton', 'missing')}"]
    lines += [f"device {d['index']}: {d['name']} ({d['arch']})" for d in python.get("devices", [])]
    buffer_ops = env["env"]["AMDGCN_USE_BUFFER_OPS"]
    lines.append(f"AMDGCN_USE_BUFFER_OPS: {'unset (Triton default)' if buffer_ops is None else buffer_ops}")
    lines.append("tools present: " + (", ".join(n for n, p in env["tools"].items() if p) or "none"))
    lines += [f"not available: {gap}" for gap in env["not_available"]]
    return lines

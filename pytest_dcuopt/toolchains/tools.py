"""How the harness finds each external tool it reports on (`dcuopt env`, `dcuopt triton env`): one finder per
name, the same lookups the toolchains use (explicit `$DCUOPT_*` paths first, then PATH and the known bundles)."""
from __future__ import annotations

import os
from collections.abc import Callable

from ..tool import which
from .cuda import find_cuobjdump
from .hip_tools import find_dccobjdump

TOOL_FINDERS: dict[str, Callable[[], str | None]] = {
    "hipcc": lambda: which("hipcc", "DCUOPT_HIPCC"),
    "hipprof": lambda: which("hipprof"),
    "dccobjdump": find_dccobjdump,
    "rocminfo": lambda: which("rocminfo"),
    "rocm-smi": lambda: which("rocm-smi"),
    "nvcc": lambda: which("nvcc", "DCUOPT_NVCC"),
    "ncu": lambda: which("ncu"),
    "cuobjdump": find_cuobjdump,  # $DCUOPT_CUOBJDUMP, PATH, the pip wheels, Triton's bundled copy
    "g++": lambda: which(os.environ.get("CXX", "g++")),
    "perf": lambda: which("perf"),
}

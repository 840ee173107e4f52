"""How the harness finds each external tool it reports on (`dcuopt env`, `dcuopt triton env`): one finder per
name, the same lookups the toolchains use (explicit `$DCUOPT_*` paths first, then PATH and the known bundles)."""
from __future__ import annotations

import os
from collections.abc import Callable

from ..external_tools import which
from .cuda import find_cuobjdump
from .hip_install import find_dccobjdump, install_roots


def in_path_or_install_roots(name: str, env_var: str | None = None) -> Callable[[], str | None]:
    """A finder: the explicit `$env_var` (only it, when set), else PATH, else `bin/<name>` under the ROCm/DTK
    install roots ($ROCM_PATH, $DTK_PATH, /opt/dtk, /opt/rocm): DTK's tools are often not on PATH."""
    def find() -> str | None:
        if env_var and os.environ.get(env_var):
            return which(name, env_var)
        return which(name) or next((p for p in install_roots(f"bin/{name}") if os.access(p, os.X_OK)), None)
    return find


TOOL_FINDERS: dict[str, Callable[[], str | None]] = {
    "hipcc": in_path_or_install_roots("hipcc", "DCUOPT_HIPCC"),
    "hipprof": in_path_or_install_roots("hipprof"),
    "dccobjdump": find_dccobjdump,
    "rocminfo": in_path_or_install_roots("rocminfo"),
    "rocm-smi": in_path_or_install_roots("rocm-smi"),
    "nvcc": lambda: which("nvcc", "DCUOPT_NVCC"),
    "ncu": lambda: which("ncu"),
    "cuobjdump": find_cuobjdump,  # $DCUOPT_CUOBJDUMP, PATH, the pip wheels, Triton's bundled copy
    "g++": lambda: which(os.environ.get("CXX", "g++")),
    "perf": lambda: which("perf"),
}

"""Where the HIP tools are: hipcc's environment, ROCm/DTK install roots, the disassemblers, `-save-temps` output.

Shared by the hip toolchain (hip.py) and its ISA dump (hip_isa.py).
"""
from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from ..external_tools import which

DCCOBJDUMP_ENV = "DCUOPT_DCCOBJDUMP"
LLVM_OBJDUMP_ENV = "DCUOPT_LLVM_OBJDUMP"
#: hipcc picks the NVIDIA platform when it sees nvcc; this toolchain always builds for AMD/DCU.
HIP_ENV = {"HIP_PLATFORM": "amd"}
_CLANG_VERSION_RE = re.compile(r"clang version (\d+)")


def install_roots(relative: str) -> list[str]:
    """`relative` under each ROCm/DTK install root ($ROCM_PATH, $DTK_PATH, /opt/dtk, /opt/rocm)."""
    roots = [os.environ[v] for v in ("ROCM_PATH", "DTK_PATH") if os.environ.get(v)] + ["/opt/dtk", "/opt/rocm"]
    return [os.path.join(root, relative) for root in dict.fromkeys(roots)]


def find_dccobjdump() -> str | None:
    """Hygon's disassembler: $DCUOPT_DCCOBJDUMP, PATH, or DTK's bin/ (only DTK ships it)."""
    if os.environ.get(DCCOBJDUMP_ENV):
        return which("dccobjdump", DCCOBJDUMP_ENV)
    return which("dccobjdump") or next((p for p in install_roots("bin/dccobjdump") if os.access(p, os.X_OK)), None)


def find_llvm_objdump(identity: str = "") -> str | None:
    """An llvm-objdump that knows AMDGPU: the override, the one matching hipcc's clang, ROCm/DTK's, then PATH's."""
    if os.environ.get(LLVM_OBJDUMP_ENV):
        return which("llvm-objdump", LLVM_OBJDUMP_ENV)
    version = _CLANG_VERSION_RE.search(identity)
    names = ([f"llvm-objdump-{version.group(1)}"] if version else [])
    for candidate in names + install_roots("llvm/bin/llvm-objdump") + ["llvm-objdump"]:
        found = which(candidate) if os.sep not in candidate else (candidate if os.access(candidate, os.X_OK) else None)
        if found:
            return found
    versioned = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        versioned += glob.glob(os.path.join(folder, "llvm-objdump-[0-9]*"))
    versioned.sort(key=lambda p: int(re.sub(r"\D", "", p.rsplit("-", 1)[-1]) or 0), reverse=True)
    return versioned[0] if versioned else None


def save_temps_assembly(folder: Path, arch: str) -> Path | None:
    """The device .s that `-save-temps` left in `folder` for `arch`
    (clang names it <stem>-hip-amdgcn-amd-amdhsa-<arch>.s)."""
    processor = arch.split(":", 1)[0]
    found = sorted(p for p in folder.glob("*.s") if "amdgcn" in p.name and processor in p.name)
    return found[0] if found else None

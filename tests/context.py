"""Gates for tests that need something a machine may lack (Kernel Tuner's test/context.py style).

Each `skip_if_no_*` is a pytest mark whose reason names what is missing and how to get it, so a
skipped test on CI says exactly why (CI has no GPU; nvcc and the SASS tools are installed there).
"""
from __future__ import annotations

import functools
import shutil

import pytest


@functools.lru_cache(maxsize=1)
def nvcc_path() -> str | None:
    from pytest_dcuopt.toolchains.cuda import CudaToolchain

    return CudaToolchain().nvcc()


@functools.lru_cache(maxsize=1)
def cuobjdump_path() -> str | None:
    from pytest_dcuopt.toolchains.cuda import find_cuobjdump

    return find_cuobjdump()


@functools.lru_cache(maxsize=1)
def hip_headers_missing() -> str | None:
    from pytest_dcuopt.toolchains.hip_nvidia import find_hip_headers, missing_reason

    return None if find_hip_headers() else missing_reason()


@functools.lru_cache(maxsize=1)
def cuda_device_missing() -> str | None:
    """None when torch sees a CUDA device here, else why not (without creating a CUDA context)."""
    try:
        import torch
    except ImportError as exc:
        return f"torch is not installed ({exc})"
    if getattr(torch.version, "hip", None):
        return f"torch {torch.__version__} is a ROCm build, not CUDA"
    if not torch.cuda.is_available():
        build = "a CPU-only torch build" if torch.version.cuda is None else "no CUDA device visible"
        return f"no CUDA device: torch {torch.__version__} reports torch.cuda.is_available() False ({build})"
    return None


skip_if_no_nvcc = pytest.mark.skipif(
    nvcc_path() is None, reason="nvcc not found (PATH or $DCUOPT_NVCC): install the CUDA toolkit")
skip_if_no_cuobjdump = pytest.mark.skipif(
    cuobjdump_path() is None, reason="cuobjdump not found: `pip install nvidia-cuda-cuobjdump`")
skip_if_no_hip_headers = pytest.mark.skipif(
    hip_headers_missing() is not None, reason=hip_headers_missing() or "")
skip_if_no_cuda_device = pytest.mark.skipif(
    cuda_device_missing() is not None, reason=f"needs a CUDA GPU: {cuda_device_missing()}")
skip_if_cuda_device = pytest.mark.skipif(
    cuda_device_missing() is None, reason="checks compile-only behaviour; this machine has a CUDA GPU")
skip_if_no_cxxfilt = pytest.mark.skipif(
    shutil.which("c++filt") is None, reason="c++filt not found: `apt-get install binutils`")


@functools.lru_cache(maxsize=1)
def hipcc_path() -> str | None:
    from pytest_dcuopt.toolchains.hip import HipToolchain

    return HipToolchain().compiler()


@functools.lru_cache(maxsize=1)
def llvm_objdump_path() -> str | None:
    from pytest_dcuopt.toolchains.hip import HipToolchain
    from pytest_dcuopt.toolchains.hip_install import find_llvm_objdump

    return find_llvm_objdump(HipToolchain().identity()) if hipcc_path() else None


skip_if_no_hipcc = pytest.mark.skipif(
    hipcc_path() is None, reason="hipcc not found (PATH or $DCUOPT_HIPCC): `apt-get install hipcc libamdhip64-dev` "
                                 "(scripts/apt-packages.txt), DTK or ROCm")
skip_if_no_llvm_objdump = pytest.mark.skipif(
    llvm_objdump_path() is None, reason="no llvm-objdump for AMDGPU: `apt-get install llvm-15`")
skip_if_no_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found: `apt-get install g++`")

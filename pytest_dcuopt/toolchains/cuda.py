"""`cuda`: `.cu` (and portable `.hip`) `solve` kernels built with `nvcc -shared`, run on torch CUDA tensors.

Build: `nvcc -O3 -shared -Xcompiler -fPIC -std=c++17 -lineinfo -arch=<arch> -Xptxas -v --keep ... cuda_shim.o kernel.cu`
(the shim object is compiled once per nvcc and arch; --keep only keeps the kernel's cubin for cuobjdump).
The arch is --dcuopt-arch, else the device's (`torch.cuda.get_device_capability`), else, with no device,
`DEFAULT_ARCH` (sm_90, the H200/H100), which the availability reason and every build record say.
`.hip` sources compile as CUDA (`-x cu -D__HIP_PLATFORM_NVIDIA__`) against HIP's own NVIDIA-platform
headers (see `hip_nvidia.py`), so one HIP source serves a DCU and an NVIDIA GPU.

Everything but running works without a GPU: builds, SASS (`disassemble`, through cuobjdump) and
per-function registers / shared memory / stack / spills (`resource_usage`, from the `ptxas -v` report
that every build keeps), so ISA and resource checks run in CI.

Running: the worker loads the .so with ctypes and calls `solve` with torch device pointers
(`torch_runtime.TorchDeviceRuntime`). After every call the kernel's own CUDA runtime is asked for its last
error (the shim `cuda_shim.cu` is linked into each build: nvcc links cudart statically, so torch
cannot see launch errors of the kernel's copy); a failed launch or a sticky fault raises `gpu_errors.CudaError`
naming the error (e.g. cudaErrorIllegalAddress), and a sticky fault ends that branch's worker.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import ToolchainUnavailable
from ..external_tools import run_tool, which
from ..files import write_atomic
from ..isa.model import ResourceUsage
from ..isa.sass import parse_ptxas_verbose, parse_resource_usage, split_sass
from ..isa.symbols import demangle, rename
from ..timing.sync_hooks import MarkedCall, SyncMarks
from .base import Artifact, Availability, Capability
from .build import Compiled, build_cached, cached_entry, run_compiler
from .cache import BuildCache
from .gpu_errors import ErrorSource
from .hip_nvidia import (
    NVIDIA_MACRO,
    compat_include_dir,
    find_hip_headers,
)
from .probe import IMPORT_TORCH, python_probe
from .torch_runtime import TorchDeviceToolchain

DEFAULT_ARCH = "sm_90"
NVCC_ENV = "DCUOPT_NVCC"
CUOBJDUMP_ENV = "DCUOPT_CUOBJDUMP"
SHIM = Path(__file__).with_name("cuda_shim.cu")
SYNC_HOOKS = Path(__file__).with_name("cuda_sync_hooks.h")  # force-included into `.cu` sources (timing.sync_hooks)
PTXAS_REPORT = "ptxas.txt"  # the build log: arch, headers and the `ptxas -v` report
BASE_FLAGS = ("-O3", "-shared", "-Xcompiler", "-fPIC", "-std=c++17", "-lineinfo", "-Xptxas", "-v")
HIP_FLAGS = ("-x", "cu", f"-D{NVIDIA_MACRO}")
_ARCH_RE = re.compile(r"^(?:sm_?|compute_)?(?P<num>\d{2,3})(?P<suffix>[af]?)$")

# Probed in a subprocess so the pytest process never creates a CUDA context of its own.
_PROBE_SCRIPT = IMPORT_TORCH + r"""
info = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None)}
if info["hip"]:
    info.update(device=None, reason=f"torch {torch.__version__} is a ROCm/HIP build; "
                                   "the cuda toolchain needs a CUDA build of torch")
elif not torch.cuda.is_available():
    why = ("a CPU-only build of torch" if info["cuda"] is None
           else "no CUDA device is visible (driver missing or CUDA_VISIBLE_DEVICES empty)")
    info.update(device=None, reason=f"torch {torch.__version__}: torch.cuda.is_available() is False ({why})")
else:
    major, minor = torch.cuda.get_device_capability(0)
    info.update(device=torch.cuda.get_device_name(0), capability=[major, minor], count=torch.cuda.device_count())
print(json.dumps(info))
"""


@functools.cache  # keyed on the nvcc path: one `--version` run per nvcc and process
def _nvcc_identity(nvcc: str) -> str:
    result = run_tool([nvcc, "--version"], timeout=60)
    version = [line for line in result.stdout.splitlines() if "release" in line or line.startswith("Build")]
    shim = hashlib.sha256(SHIM.read_bytes() + SYNC_HOOKS.read_bytes()).hexdigest()[:12]
    return f"{' | '.join(version) or nvcc} | shim {shim}"


class CudaToolchain(TorchDeviceToolchain):
    name = "cuda"
    extensions = (".cu", ".hip")
    isa_family = "sass"
    check_each_call = True  # the shim's cudaGetLastError names a failed launch at the call

    def device_platform(self) -> str:
        return "nvidia"  # .cu and HIP-on-NVIDIA (.hip built as CUDA) alike

    # ----- discovery --------------------------------------------------------------------
    def nvcc(self) -> str | None:
        return which("nvcc", NVCC_ENV)

    def availability(self) -> Availability:
        nvcc = self.nvcc()
        if nvcc is None:
            return Availability(Capability.UNAVAILABLE,
                                f"nvcc not found (PATH, or ${NVCC_ENV}): install the CUDA toolkit, or "
                                "`pip install nvidia-cuda-nvcc` and put its bin/ on PATH")
        probe = device_probe()
        arch, arch_note = self.target_arch(probe)
        details: dict[str, Any] = {"nvcc": nvcc, "nvcc_version": self.identity(), "arch": arch,
                                   "arch_source": arch_note, "cuobjdump": find_cuobjdump(),
                                   "hip_headers": str(find_hip_headers() or "")}
        details.update({k: v for k, v in probe.items() if k in ("torch", "cuda", "device")})
        if probe.get("capability"):
            details["compute_capability"] = probe["capability"]
        if probe.get("device"):
            return Availability(Capability.RUN, f"{nvcc} building for {arch} ({arch_note}) on {probe['device']}",
                                details)
        return Availability(Capability.COMPILE_ONLY,
                            f"no CUDA device to run on: {probe.get('reason')}. Builds, SASS and resource checks still "
                            f"run, for {arch} ({arch_note}); correctness and benchmark tests skip", details)

    def target_arch(self, probe: dict[str, Any] | None = None) -> tuple[str, str]:
        """(arch, where it came from). --dcuopt-arch wins; a non-NVIDIA arch there is ignored, and said so."""
        note = ""
        if self.arch:
            normalized = normalize_arch(self.arch)
            if normalized:
                return normalized, "--dcuopt-arch"
            note = f"--dcuopt-arch {self.arch} is not an NVIDIA architecture and is ignored by the cuda toolchain; "
        probe = device_probe() if probe is None else probe
        if probe.get("capability"):
            major, minor = probe["capability"]
            return f"sm_{major}{minor}", note + f"the device's compute capability {major}.{minor}"
        return DEFAULT_ARCH, note + f"no device: the documented default {DEFAULT_ARCH}; set --dcuopt-arch to change it"

    def identity(self) -> str:
        return _nvcc_identity(self.nvcc() or "nvcc")

    def flags(self, arch: str) -> tuple[str, ...]:
        return (*BASE_FLAGS, f"-arch={arch}", *self.extra_flags)

    # ----- build ------------------------------------------------------------------------
    def build(self, source: Path, cache: BuildCache) -> Artifact:
        nvcc = self.nvcc()
        if nvcc is None:
            raise ToolchainUnavailable(self.availability().reason)
        arch, arch_note = self.target_arch()
        flags = self.flags(arch)
        header_args: tuple[str, ...] = ()
        header_note = ""
        if source.suffix == ".hip":
            headers = compat_include_dir(nvcc, self.identity(), cache, arch)
            header_args = (*HIP_FLAGS, "-DDCUOPT_NO_SYNC_HOOKS", "-isystem", str(headers.include_dir))
            header_note = headers.describe() + "\n"
            flags = (*flags, f"hip-headers:{headers.include_dir.parent.name}")  # into the key only
        else:  # the blocking calls of a `.cu` solve go through the shim's hooks (timing.sync_hooks; no-op unless armed)
            header_args = ("-include", str(SYNC_HOOKS))
            flags = (*flags, "sync-hooks")  # into the key only (the hooks' text is in the identity's shim hash)
        # nvcc's `-x cu` (needed for .hip) applies to every input, so a .hip build compiles the shim source.
        shim = SHIM if source.suffix == ".hip" else self._shim_object(nvcc, arch, cache)
        key = cache.key(source, self.name, self.identity(), arch, flags)

        def compile_into(staging: Path) -> Compiled:
            keep = staging / "keep"
            keep.mkdir()
            # --keep leaves the kernel's cubin behind: cuobjdump reads it much faster than the whole .so.
            result = run_compiler([nvcc, *self.flags(arch), "--keep", "--keep-dir", keep, "-o", staging / "kernel.so",
                                   shim, *header_args, source], source, timeout=600)
            cubin = keep / f"{source.stem}.{arch}.cubin"
            if cubin.is_file():
                os.replace(cubin, staging / "kernel.cubin")
            shutil.rmtree(keep, ignore_errors=True)
            (staging / "resources.json").write_text(json.dumps(
                {k: v.to_json() for k, v in parse_ptxas_verbose(result.stderr).items()}, indent=1))
            return Compiled(result.command_line, f"arch {arch} ({arch_note})\n{header_note}{result.stderr}")

        return build_cached(self.name, source, cache, key, arch, compile_into, log_file=PTXAS_REPORT)

    def _shim_object(self, nvcc: str, arch: str, cache: BuildCache) -> Path:
        """cuda_shim.cu compiled once per (nvcc, arch) and linked into every kernel library."""
        key = "cuda-shim-" + hashlib.sha256(f"{self.identity()}|{arch}".encode()).hexdigest()[:20]

        def compile_into(staging: Path) -> None:
            run_compiler([nvcc, "-O3", "-c", "-Xcompiler", "-fPIC", f"-arch={arch}", SHIM,
                          "-o", staging / "cuda_shim.o"], SHIM, timeout=300)

        return cached_entry(cache, key, "cuda_shim.o", compile_into)[0]

    # ----- ISA and resources ------------------------------------------------------------
    def disassemble(self, artifact: Artifact) -> dict[str, str]:
        """{function (demangled): SASS} from `cuobjdump --dump-sass`; cached beside the artifact.

        Raises ToolchainUnavailable (naming the fix) when no cuobjdump is found.
        """
        cached = artifact.path.parent / "sass.json"
        if cached.is_file():
            return json.loads(cached.read_text())
        cuobjdump = find_cuobjdump()
        if cuobjdump is None:
            raise ToolchainUnavailable(cuobjdump_missing())
        cubin = artifact.path.parent / "kernel.cubin"  # the kernel's own device code, kept by the build
        result = run_tool([cuobjdump, "--dump-sass", cubin if cubin.is_file() else artifact.path], timeout=300,
                          env=beside_on_path(cuobjdump))
        if not result.ok:
            raise ToolchainUnavailable(f"{result.command_line} failed (exit {result.returncode}): "
                                       f"{result.stderr[-2000:]}")
        functions = split_sass(result.stdout, artifact.arch)
        named = rename(functions, demangle(functions))
        write_atomic(cached, json.dumps(named))
        return named

    def resource_usage(self, artifact: Artifact) -> dict[str, ResourceUsage]:
        """{function (demangled): registers, shared memory, stack, spill bytes} from the build's `ptxas -v` report."""
        report = artifact.path.parent / PTXAS_REPORT
        if report.is_file():
            usage = parse_ptxas_verbose(report.read_text())
        else:  # an artifact built elsewhere: ask cuobjdump (SHARED there includes the system's reserve)
            cuobjdump = find_cuobjdump()
            if cuobjdump is None:
                raise ToolchainUnavailable(f"{artifact.path} has no ptxas report beside it and {cuobjdump_missing()}")
            result = run_tool([cuobjdump, "--dump-resource-usage", artifact.path], timeout=120,
                              env=beside_on_path(cuobjdump))
            usage = parse_resource_usage(result.stdout)
        return {name: replace(value, function=name) for name, value in rename(usage, demangle(usage)).items()}

    # ----- worker side ------------------------------------------------------------------
    def error_source(self, library: ctypes.CDLL) -> ErrorSource:
        return ShimErrors(library)

    def sync_marks(self, library: ctypes.CDLL) -> SyncMarks | None:
        return ShimSyncMarks(library) if hasattr(library, "dcuopt_sync_begin") else None


class ShimSyncMarks:
    """The sync hooks of `cuda_shim.cu` (`timing.sync_hooks.SyncMarks`): events the library's own runtime records."""

    CAPACITY = 32

    def __init__(self, library: ctypes.CDLL) -> None:
        self._begin, self._end = library.dcuopt_sync_begin, library.dcuopt_sync_end
        self._read = library.dcuopt_sync_read
        self._begin.restype, self._begin.argtypes = ctypes.c_int, [ctypes.c_longlong]
        self._end.restype, self._end.argtypes = ctypes.c_int, []
        self._read.restype = ctypes.c_int
        self._read.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                               ctypes.POINTER(ctypes.c_double)]
        self._out = (ctypes.c_float * self.CAPACITY)()

    def begin(self, lead_cycles: int) -> bool:
        return bool(self._begin(int(lead_cycles)))

    def end(self) -> None:
        self._end()

    def read(self) -> MarkedCall | None:
        waits, first_wait = ctypes.c_int(0), ctypes.c_double(-1.0)
        count = self._read(self._out, self.CAPACITY, ctypes.byref(waits), ctypes.byref(first_wait))
        if count < 0:
            return None
        return MarkedCall([self._out[i] * 1e-3 for i in range(count)], waits.value, first_wait.value)


class ShimErrors(ErrorSource):
    """The kernel library's own CUDA runtime, through the functions of `cuda_shim.cu`."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._last = library.dcuopt_cuda_get_last_error
        self._sync = library.dcuopt_cuda_device_synchronize
        self._name = library.dcuopt_cuda_error_name
        self._text = library.dcuopt_cuda_error_string
        for function in (self._last, self._sync):
            function.restype, function.argtypes = ctypes.c_int, []
        for function in (self._name, self._text):
            function.restype, function.argtypes = ctypes.c_char_p, [ctypes.c_int]

    def last_error(self) -> int:
        return int(self._last())

    def synchronize(self) -> int:
        return int(self._sync())

    def name(self, code: int) -> str:
        return (self._name(code) or b"?").decode()

    def text(self, code: int) -> str:
        return (self._text(code) or b"?").decode()


# ----- helpers ---------------------------------------------------------------------------
def normalize_arch(text: str) -> str | None:
    """'sm_90', 'sm90', '90', 'compute_90', 'sm_90a' -> 'sm_90' / 'sm_90a'; anything else -> None."""
    match = _ARCH_RE.match(text.strip().lower())
    return f"sm_{match.group('num')}{match.group('suffix')}" if match else None


@functools.lru_cache(maxsize=1)
def device_probe() -> dict[str, Any]:
    """What a fresh Python with this interpreter's torch sees (name, compute capability), as a dict."""
    return python_probe(_PROBE_SCRIPT, timeout=180)


def find_cuobjdump() -> str | None:
    """$DCUOPT_CUOBJDUMP, PATH, the pip wheel nvidia-cuda-cuobjdump, or the copy inside the triton wheel."""
    found = which("cuobjdump", CUOBJDUMP_ENV)
    if found:
        return found
    for package, relative in (("nvidia.cu13", "bin/cuobjdump"), ("nvidia.cuda_cuobjdump", "bin/cuobjdump"),
                              ("triton", "backends/nvidia/bin/cuobjdump")):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidate = Path(location) / relative
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def beside_on_path(tool: str) -> dict[str, str]:
    """cuobjdump runs nvdisasm for SASS and finds it on PATH only: put the tool's own directory first
    (the pip wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm install both into one bin/)."""
    return {"PATH": os.pathsep.join([str(Path(tool).parent), os.environ.get("PATH", "")])}


def cuobjdump_missing() -> str:
    return (f"cuobjdump was not found (${CUOBJDUMP_ENV}, PATH, the nvidia-cuda-cuobjdump wheel, the triton wheel); "
            "install it with `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` (no GPU or toolkit needed; "
            "cuobjdump runs nvdisasm for SASS)")



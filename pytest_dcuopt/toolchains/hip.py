"""`hip`: `.hip` `solve` kernels for AMD (ROCm) and Hygon DCU (DTK) GPUs, built with hipcc.

Build: `HIP_PLATFORM=amd hipcc -shared -fPIC -O3 -std=c++17 --offload-arch=<arch>
-Rpass-analysis=kernel-resource-usage -o kernel.so kernel.hip` (plus `-x hip` for a .cpp source
and `-I <ck_tile include>` for a CK Tile kernel). The arch is --dcuopt-arch (its `gfx...` entry),
else the device's (`rocminfo`, then torch's `gcnArchName`); it is never guessed: with neither,
builds are refused with the fix, so ISA checks skip instead of checking some other chip's code.
A CI script may name the arch for device-less runs in $DCUOPT_HIP_COMPILE_ARCH (the option and a
device both win over it); every availability reason and verdict says where the arch came from.

Capability: RUN with hipcc and a ROCm/DTK torch device (torch.cuda on those builds);
COMPILE_ONLY with hipcc alone (CI: Debian's `hipcc` with HIP_PLATFORM=amd); UNAVAILABLE without.

ISA (`isa_dump`): on a DTK machine `dccobjdump --inputs=<.so> --show-sass
--show-instruction-encoding --separate-functions`; elsewhere the code object is taken out of the
.so's `.hip_fatbin` (pure Python, see isa/elf.py) and disassembled with `llvm-objdump -d`. When the
disassembler fails or prints no instructions, the device assembly from `hipcc -save-temps` is used
instead and the dump says so. Resources come from the code object's metadata note and the
build's resource-usage remarks. The family is "dcu" for Hygon archs (gfx92x/93x/94x), else "amdgcn".
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..errors import CaseError, CompileError, ToolchainUnavailable
from ..external_tools import ToolResult, run_tool, which
from ..isa.model import IsaDump, ResourceUsage
from .base import Artifact, Availability, Capability
from .build import Compiled, build_cached, run_compiler
from .cache import BuildCache
from .gpu_errors import ErrorSource
from .hip_install import HIP_ENV, find_dccobjdump, find_llvm_objdump, install_roots
from .hip_isa import dump_hip_artifact
from .probe import IMPORT_TORCH, python_probe, torch_build
from .torch_runtime import TorchDeviceToolchain

HIPCC_ENV = "DCUOPT_HIPCC"
#: The arch for runs with no device and no --dcuopt-arch (CI sets gfx90a); a device or the option wins over it.
COMPILE_ARCH_ENV = "DCUOPT_HIP_COMPILE_ARCH"
BASE_FLAGS = ("-shared", "-fPIC", "-O3", "-std=c++17")
RESOURCE_REMARKS = "-Rpass-analysis=kernel-resource-usage"
#: Hygon DCU processors (the skill's hcu_targets table); everything else is upstream AMDGCN.
HYGON_ARCHS = frozenset({"gfx926", "gfx928", "gfx92a", "gfx936", "gfx938", "gfx946", "gfx948"})
INSTALL_HINT = ("install a HIP compiler: `apt-get install hipcc libamdhip64-dev` (Debian/Ubuntu; compile-only), "
                "DTK (Hygon, /opt/dtk/bin/hipcc) or ROCm (/opt/rocm/bin/hipcc), or point $" + HIPCC_ENV + " at hipcc")
CK_TILE_ENV = ("CK_TILE_PATH", "CK_TILE_INCLUDE_DIR", "CK_PATH", "COMPOSABLE_KERNEL_PATH")
_GFX_RE = re.compile(r"^gfx[0-9a-f]{3,4}(?::[a-z0-9_]+[+-])*$", re.I)
_ROCMINFO_GFX_RE = re.compile(r"^\s*Name:\s+(gfx[0-9a-f]{3,4})\s*$", re.M | re.I)
_ARCH_REJECTED_RE = re.compile(r"invalid target ID|unsupported (?:HIP )?gpu architecture|unknown target CPU|"
                               r"invalid offload arch|is not a recognized processor", re.I)
_CK_TILE_USE_RE = re.compile(r"ck_tile/|ck_tile::")
_DEVICE_PROBE = IMPORT_TORCH + r"""
info = {"torch": torch.__version__, "hip": getattr(torch.version, "hip", None)}
if not info["hip"]:
    info.update(device=None, reason=f"torch {torch.__version__} is not a ROCm/DTK build (torch.version.hip is None)")
elif not torch.cuda.is_available():
    info.update(device=None, reason=f"torch {torch.__version__} (HIP {info['hip']}) sees no device")
else:
    props = torch.cuda.get_device_properties(0)
    info.update(device=torch.cuda.get_device_name(0), gcn_arch=getattr(props, "gcnArchName", None))
print(json.dumps(info))
"""


class UnsupportedArch(ToolchainUnavailable):
    """The installed HIP compiler does not know the requested arch (e.g. upstream clang and gfx936)."""


def is_hygon(arch: str | None) -> bool:
    return arch is not None and arch.split(":", 1)[0].lower() in HYGON_ARCHS


def gfx_entries(option: str | None) -> list[str]:
    """The `gfx...` entries of a --dcuopt-arch value (a comma list may also name other toolchains' archs)."""
    return [part for part in re.split(r"[,\s]+", option or "") if _GFX_RE.match(part)]


class HipToolchain(TorchDeviceToolchain):
    name = "hip"
    extensions = (".hip",)
    isa_family = "amdgcn"
    isa_families = ("amdgcn", "dcu")

    def __init__(self, arch: str | None = None, extra_flags: Sequence[str] = ()) -> None:
        super().__init__(arch, extra_flags)
        self._dumps: dict[str, IsaDump] = {}

    def device_platform(self) -> str:
        # This toolchain always builds with HIP_PLATFORM=amd for ROCm/DTK devices (a DCU is amd too); HIP on NVIDIA
        # is built by the cuda toolchain, whose platform is nvidia.
        return "amd"

    # ----- discovery --------------------------------------------------------------------
    def compiler(self) -> str | None:
        if os.environ.get(HIPCC_ENV):
            return which("hipcc", HIPCC_ENV)  # an explicit choice that is wrong is not replaced by another
        found = which("hipcc")
        return found or next((p for p in install_roots("bin/hipcc") if os.access(p, os.X_OK)), None)

    def availability(self) -> Availability:
        hipcc = self.compiler()
        if hipcc is None:
            return Availability(Capability.UNAVAILABLE, f"no HIP compiler: hipcc is not on PATH; {INSTALL_HINT}")
        probe = device_probe()
        try:
            arch, source = self.target_arch(probe)
        except ToolchainUnavailable as exc:  # a bad --dcuopt-arch: builds will refuse with the same words
            arch, source = None, str(exc)
        details: dict[str, Any] = {"hipcc": hipcc, "hipcc_version": self.identity(), "arch": arch,
                                   "arch_source": source, "isa_family": self.isa_family_for(arch),
                                   "disassembler": find_dccobjdump() or find_llvm_objdump(self.identity())}
        details.update({k: v for k, v in probe.items() if k in ("torch", "hip", "device", "gcn_arch")})
        target = f"for {arch} ({source})" if arch else f"with no target arch ({source})"
        if probe.get("device"):
            return Availability(Capability.RUN, f"{hipcc} building {target} on {probe['device']}", details)
        return Availability(Capability.COMPILE_ONLY,
                            f"no ROCm/DTK device to run on: {probe.get('reason')}. Builds and ISA checks still run "
                            f"{target}; correctness and benchmark tests skip", details)

    def target_arch(self, probe: dict[str, Any] | None = None) -> tuple[str | None, str]:
        """(arch or None, where it came from). Never a default: no arch means no build."""
        entries = gfx_entries(self.arch)
        if len(entries) > 1:
            raise ToolchainUnavailable(f"--dcuopt-arch {self.arch!r} names {len(entries)} AMD archs "
                                       f"({', '.join(entries)}); the hip toolchain builds one per run: "
                                       "run pytest once per arch")
        if entries:
            return entries[0], "--dcuopt-arch"
        ignored = f"--dcuopt-arch {self.arch!r} names no gfx arch; " if self.arch else ""
        probe = device_probe() if probe is None else probe
        if probe.get("device"):
            found = rocminfo_archs() or ([probe["gcn_arch"]] if probe.get("gcn_arch") else [])
            if found:
                return found[0], ignored + f"the device ({probe['device']}, via rocminfo / torch gcnArchName)"
        fallback = os.environ.get(COMPILE_ARCH_ENV, "").strip()
        if fallback:
            if not _GFX_RE.match(fallback):
                raise ToolchainUnavailable(f"${COMPILE_ARCH_ENV}={fallback!r} is not an AMD arch; set e.g. gfx90a")
            return fallback, ignored + f"${COMPILE_ARCH_ENV} (no --dcuopt-arch, no ROCm/DTK device)"
        return None, (ignored + "no --dcuopt-arch and no ROCm/DTK device; pass --dcuopt-arch=gfx90a (CI, upstream "
                      "compilers) or the DCU's arch (gfx928, gfx936, gfx938 with DTK's hipcc), "
                      f"or set ${COMPILE_ARCH_ENV}")

    def isa_family_for(self, arch: str | None) -> str:
        return "dcu" if is_hygon(arch) else "amdgcn"

    def identity(self) -> str:
        return _hipcc_identity(self.compiler() or "hipcc")

    def flags(self, source: Path, arch: str) -> tuple[str, ...]:
        language = ("-x", "hip") if source.suffix != ".hip" else ()
        return (*BASE_FLAGS, f"--offload-arch={arch}", RESOURCE_REMARKS, *ck_tile_flags(source), *self.extra_flags,
                *language)

    # ----- build ------------------------------------------------------------------------
    def build(self, source: Path, cache: BuildCache) -> Artifact:
        hipcc = self.compiler()
        if hipcc is None:
            raise ToolchainUnavailable(self.availability().reason)
        arch, arch_source = self.target_arch()
        if arch is None:
            raise ToolchainUnavailable(f"no target architecture to build {source.name} for: {arch_source}")
        flags = self.flags(source, arch)
        key = cache.key(source, self.name, self.identity(), arch, flags)

        def refuse(result: ToolResult) -> NoReturn:
            _raise_build_error(result, source, arch, self.identity())

        def compile_into(staging: Path) -> Compiled:
            result = run_compiler([hipcc, *flags, "-o", staging / "kernel.so", source], source, timeout=600,
                                  env=HIP_ENV, on_failure=refuse)
            return Compiled(result.command_line, f"arch {arch} ({arch_source})\n{result.stderr}")

        return build_cached(self.name, source, cache, key, arch, compile_into)

    # ----- worker side ------------------------------------------------------------------
    def error_source(self, library: ctypes.CDLL) -> ErrorSource | None:
        try:
            return HipErrors(library)
        except AttributeError:  # the library does not link the HIP runtime's error functions
            return None

    # ----- ISA and resources ------------------------------------------------------------
    def disassemble(self, artifact: Artifact) -> dict[str, str]:
        return dict(self.isa_dump(artifact).functions)

    def resource_usage(self, artifact: Artifact) -> dict[str, ResourceUsage]:
        return dict(self.isa_dump(artifact).resources)

    def isa_dump(self, artifact: Artifact) -> IsaDump:
        """The artifact's per-function ISA and resources, with the tools used and any fallback said aloud."""
        if artifact.key not in self._dumps:
            self._dumps[artifact.key] = dump_hip_artifact(self, artifact)
        return self._dumps[artifact.key]

    def save_temps_command(self, source: Path, arch: str, output: Path) -> list[str]:
        """The fallback: rebuild with `-save-temps` so the device assembly (.s) is kept."""
        return [self.compiler() or "hipcc", *self.flags(source, arch), "-save-temps", "-o", str(output), str(source)]


def _raise_build_error(result: ToolResult, source: Path, arch: str, identity: str) -> NoReturn:
    rejected = next((line for line in result.stderr.splitlines()
                     if _ARCH_REJECTED_RE.search(line) and arch.split(":")[0] in line), None)
    if rejected is not None:
        hint = ("it is a Hygon DCU arch: build it with DTK's hipcc (/opt/dtk/bin/hipcc, or $" + HIPCC_ENV + "); "
                "upstream clang/ROCm do not know it. Without DTK, check the nearest upstream relative with "
                "--dcuopt-arch=gfx90a (or gfx906)") if is_hygon(arch) else "pick an arch this compiler lists"
        raise UnsupportedArch(f"the HIP compiler ({identity}) does not support {arch}: {rejected.strip()}; {hint}. "
                              f"Command: {result.command_line}")
    raise CompileError(result, str(source))


# ----- tool discovery ---------------------------------------------------------------------
@functools.cache  # keyed on the hipcc path: one `--version` run per hipcc and process
def _hipcc_identity(hipcc: str) -> str:
    result = run_tool([hipcc, "--version"], timeout=60, env=HIP_ENV)
    lines = [line.strip() for line in result.stdout.splitlines()
             if line.strip() and not line.startswith(("Target:", "Thread model:", "InstalledDir:"))]
    return " | ".join(lines) or f"{hipcc} (version unknown: exit {result.returncode})"


@functools.lru_cache(maxsize=1)
def device_probe() -> dict[str, Any]:
    """Is there a ROCm/DTK torch device? Asked in a subprocess, so pytest itself never opens a HIP context.

    A torch whose version file says `hip = None` (CPU or CUDA builds) cannot have one: that is read
    from torch/version.py without importing torch, which saves seconds per pytest run in CI.
    """
    build = _torch_build()
    if build is not None and build.get("hip") is None:
        return {"device": None, "torch": build.get("version"), "hip": None,
                "reason": f"torch {build.get('version')} is not a ROCm/DTK build (torch.version.hip is None)"}
    return python_probe(_DEVICE_PROBE, timeout=120)


def _torch_build() -> dict[str, str | None] | None:
    """`__version__` and `hip` from torch/version.py, or None when torch, the file or its `hip` is not there."""
    try:
        values = torch_build()
    except OSError:
        return None
    if values is None or "hip" not in values:
        return None
    return {"version": values.get("__version__"), "hip": values["hip"]}


def rocminfo_archs() -> list[str]:
    rocminfo = which("rocminfo") or next((p for p in install_roots("bin/rocminfo") if os.access(p, os.X_OK)), None)
    if rocminfo is None:
        return []
    result = run_tool([rocminfo], timeout=30)
    return list(dict.fromkeys(_ROCMINFO_GFX_RE.findall(result.stdout))) if result.ok else []


def ck_tile_flags(source: Path) -> tuple[str, ...]:
    """`-I <dir>` for a kernel that uses CK Tile; found as the original skill did.

    Raises a CaseError listing what was tried when CK Tile's headers are not found."""
    try:
        text = source.read_text(errors="replace")
    except OSError:
        return ()
    if not _CK_TILE_USE_RE.search(text):
        return ()
    tried: list[str] = []
    for variable in CK_TILE_ENV:
        value = os.environ.get(variable)
        if not value:
            tried.append(f"${variable} (unset)")
            continue
        for candidate in (value, os.path.join(value, "include")):
            tried.append(f"${variable} -> {candidate}")
            if os.path.isdir(os.path.join(candidate, "ck_tile")):
                return ("-I", candidate)
    patterns = ["/opt/dtk*/include", "/opt/dtk*/*/include", "/opt/rocm*/include", "/opt/rocm*/*/include",
                "/usr/local/include", "/usr/include"]
    for pattern in patterns:
        tried.append(pattern)
        for candidate in sorted(glob.glob(pattern)):
            if os.path.isdir(os.path.join(candidate, "ck_tile")):
                return ("-I", candidate)
    raise CaseError(f"{source} uses CK Tile (ck_tile::), but no include directory with a ck_tile/ folder was found. "
                    f"Tried: {'; '.join(tried)}. Set CK_TILE_PATH to a composable_kernel checkout (its include/ "
                    "holds ck_tile/), e.g. HYGON-AI/composable_kernel-das for DCU.")


# ----- runtime errors ---------------------------------------------------------------------
class HipErrors(ErrorSource):
    """The HIP runtime that the kernel library links (hipGetLastError); AttributeError when it links none."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._last = library.hipGetLastError
        self._sync = library.hipDeviceSynchronize
        self._name, self._text = library.hipGetErrorName, library.hipGetErrorString
        self._name.restype = self._text.restype = ctypes.c_char_p
        self._name.argtypes = self._text.argtypes = [ctypes.c_int]

    def last_error(self) -> int:
        return int(self._last())

    def synchronize(self) -> int:
        return int(self._sync()) or int(self._last())

    def name(self, code: int) -> str:
        return (self._name(code) or b"hipError?").decode()

    def text(self, code: int) -> str:
        return (self._text(code) or b"unknown").decode()

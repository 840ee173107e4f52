"""The ISA of a Triton branch without a GPU: ahead-of-time compiles for a named target, read per kernel.

Target (`target_for`): the `--dcuopt-arch` entry Triton can compile for (gfx90a, gfx942, hip:gfx942,
sm_90, cuda:90), else the GPU torch sees, else `$DCUOPT_TRITON_ARCH`, else gfx942; the dump's notes
say which. The compile runs in a subprocess (toolchains/triton_aot.py) and its output is kept beside
the build (`<build>/aot/<target>/`: every stage of every kernel, and manifest.json).

AMDGCN: the hsaco disassembled with llvm-objdump (the first one on this machine that knows the arch;
llvm-objdump-14/15 do not know gfx942), else Triton's own `amdgcn` assembly of the same compile, said
in the notes. Resources: the hsaco's metadata note (VGPR/SGPR/AGPR, spills, scratch) with Triton's
`shared` (LDS is dynamic, so the note says 0). SASS (cuda targets): Triton's `asm["sass"]`, resources
from its bundled cuobjdump. Hygon archs (gfx928/936/938...) are refused by upstream Triton: the dump
carries that refusal as an error, so every check on it is inconclusive, never a pass.
"""
from __future__ import annotations

import functools
import glob
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..external_tools import run_tool, which
from ..isa import amdgcn, elf
from ..isa.functions import split_asm, split_objdump
from ..isa.instruction_lines import parse_amdgcn
from ..isa.model import IsaDump, ResourceUsage
from ..isa.sass import parse_resource_usage, split_sass
from .hip import HYGON_ARCHS, is_hygon
from .hip_install import LLVM_OBJDUMP_ENV, install_roots
from .probe import python_probe, torch_build
from .triton_aot import KERNEL_METADATA
from .triton_contract import TritonContract

if TYPE_CHECKING:
    from .base import Artifact

TARGET_ENV = "DCUOPT_TRITON_ARCH"
DEFAULT_TARGET = "hip:gfx942"
AOT_TIMEOUT_S = 600
_HIP_RE = re.compile(r"^(?:hip:)?(gfx[0-9a-f]{3,4})$", re.I)
_CUDA_RE = re.compile(r"^(?:cuda:(\d{2,3})|sm_(\d{2,3})a?)$", re.I)
_UNSUPPORTED_RE = re.compile(r"unsupported target: '([^']+)'")
_PADDING_RE = re.compile(r"^\s*s_(?:nop 0|code_end)\b")
_GPU_PROBE = r"""
import json
import torch
if not torch.cuda.is_available():
    print(json.dumps({"device": None, "reason": "torch sees no GPU"})); raise SystemExit
props = torch.cuda.get_device_properties(0)
if getattr(torch.version, "hip", None):
    arch = "hip:" + props.gcnArchName.split(":")[0]
else:
    arch = f"cuda:{props.major}{props.minor}"
print(json.dumps({"device": torch.cuda.get_device_name(0), "target": arch}))
"""


@dataclass(frozen=True)
class TritonTarget:
    backend: str  # "hip" or "cuda"
    arch: str  # "gfx942" or "90"

    @property
    def label(self) -> str:
        return f"{self.backend}:{self.arch}"

    @property
    def isa_arch(self) -> str:
        """The arch as the ISA marks name it: gfx942, sm_90."""
        return self.arch if self.backend == "hip" else f"sm_{self.arch}"

    @property
    def family(self) -> str:
        if self.backend == "cuda":
            return "sass"
        return "dcu" if is_hygon(self.arch) else "amdgcn"


def parse_target(text: str) -> TritonTarget | None:
    """gfx942 / hip:gfx942 -> hip:gfx942; sm_90 / sm_90a / cuda:90 -> cuda:90; anything else None."""
    text = text.strip()
    hip = _HIP_RE.match(text)
    if hip:
        return TritonTarget("hip", hip.group(1).lower())
    cuda = _CUDA_RE.match(text)
    if cuda:
        return TritonTarget("cuda", cuda.group(1) or cuda.group(2))
    return None


def target_for(option: str | None) -> tuple[TritonTarget | None, str]:
    """(target, where it came from), or (None, why there is none)."""
    entries = [t for part in re.split(r"[,\s]+", option or "") if part and (t := parse_target(part)) is not None]
    chosen = os.environ.get(TARGET_ENV, "").strip()
    if len(entries) == 1:
        return entries[0], "--dcuopt-arch"
    if len(entries) > 1:
        picked = parse_target(chosen) if chosen else None
        if picked in entries:
            return picked, f"${TARGET_ENV} (one of the {len(entries)} targets --dcuopt-arch names)"
        return None, (f"--dcuopt-arch {option!r} names {len(entries)} targets Triton compiles for "
                      f"({', '.join(t.label for t in entries)}); the triton ISA check compiles for one: set "
                      f"${TARGET_ENV} to one of them")
    device = gpu_target()
    if device is not None:
        return device
    if chosen:
        picked = parse_target(chosen)
        if picked is None:
            return None, f"${TARGET_ENV}={chosen!r} is not a Triton target; use e.g. gfx942, hip:gfx90a, sm_90, cuda:90"
        return picked, f"${TARGET_ENV} (no --dcuopt-arch, no GPU)"
    default = parse_target(DEFAULT_TARGET)
    return default, f"the default {DEFAULT_TARGET} (no --dcuopt-arch, no GPU, no ${TARGET_ENV})"


@functools.lru_cache(maxsize=1)
def gpu_target() -> tuple[TritonTarget, str] | None:
    """The GPU torch sees, as a target (asked in a subprocess; skipped for a CPU-only torch build)."""
    if not _torch_may_see_gpu():
        return None
    found = python_probe(_GPU_PROBE, timeout=120)
    target = parse_target(str(found.get("target") or ""))
    return (target, f"the GPU ({found.get('device')})") if target is not None else None


def _torch_may_see_gpu() -> bool:
    try:
        values = torch_build()
    except OSError:
        return True  # unknown build: ask torch
    return values is not None and any(values.get(k) not in (None, "None") for k in ("cuda", "hip"))


# ----- the dump ---------------------------------------------------------------------------
def dump_triton_artifact(artifact: Artifact, target: TritonTarget | None, where: str) -> IsaDump:
    if target is None:
        return IsaDump("amdgcn", None, "", errors=[f"no target to compile the Triton kernels for: {where}"])
    dump = IsaDump(target.family, target.isa_arch, "")
    folder, command = compile_ahead(artifact, target, dump)
    dump.tool = command
    dump.notes.append(f"Triton AOT compile for {target.label} (target from {where}); every stage kept in {folder}")
    if folder is None or dump.errors:
        return dump
    manifest = json.loads((folder / "manifest.json").read_text())
    dump.notes.append(f"specialised at the default dims {manifest['dims']} (as a launch there would be); "
                      f"environment: {_env_note(manifest['env'])}")
    names: dict[str, int] = {}
    for kernel in manifest["kernels"]:
        seen = names[kernel["name"]] = names.get(kernel["name"], 0) + 1
        function = kernel["name"] if seen == 1 else f"{kernel['name']}#{seen}"
        dump.notes.append(_kernel_note(function, kernel))
        dump.errors += [f"{function}: {e}" for e in kernel["errors"]]
        if target.backend == "hip":
            _read_amdgcn(folder, function, kernel, dump)
        else:
            _read_sass(folder, function, kernel, dump)
    return dump


def compile_ahead(artifact: Artifact, target: TritonTarget, dump: IsaDump) -> tuple[Path | None, str]:
    """<build>/aot/<target>/ with the compiled stages (made once; reused while the build is cached)."""
    root = artifact.path.parent / "aot"
    folder = root / target.label.replace(":", "_")
    command = [sys.executable, "-m", "pytest_dcuopt.toolchains.triton_aot", str(artifact.path), target.label]
    if (folder / "manifest.json").is_file():
        return folder, " ".join([*command, str(folder)]) + "  (cached)"
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".aot.", dir=root))
    env = {**TritonContract.read(artifact.path).env, "TRITON_INTERPRET": "0",
           "TRITON_CACHE_DIR": str(staging / "triton-cache"),
           "TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                       os.environ.get("PYTHONPATH")]))}
    result = run_tool([*command, str(staging)], timeout=AOT_TIMEOUT_S, env=env)
    if not result.ok:
        shutil.rmtree(staging, ignore_errors=True)
        dump.errors.append(_compile_failure(result.stderr or result.stdout, target, result.returncode))
        return None, result.command_line
    shutil.rmtree(staging / "triton-cache", ignore_errors=True)  # the stages are kept; Triton's cache is not needed
    try:
        os.replace(staging, folder)
    except OSError:  # another process published it first
        shutil.rmtree(staging, ignore_errors=True)
    return folder, result.command_line.replace(str(staging), str(folder))


def kernel_metadata(folder: Path) -> list[dict[str, Any]]:
    """Per compiled kernel of an AOT folder: Triton's metadata (num_warps, num_stages, shared...) with the
    registers and spills the binary reports (hsaco metadata note; cuobjdump's resource usage on NVIDIA)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    found = []
    for kernel in manifest["kernels"]:
        meta = kernel["metadata"]
        entry: dict[str, Any] = {"kernel": kernel["name"], **{k: meta.get(k) for k in KERNEL_METADATA}}
        files = kernel["files"]
        usage: dict[str, ResourceUsage] = {}
        try:
            if "hsaco" in files:
                usage = amdgcn.metadata_resources((folder / files["hsaco"]).read_bytes())
            elif "resource-usage" in files:
                usage = parse_resource_usage((folder / files["resource-usage"]).read_text())
        except (elf.ElfError, OSError, ValueError) as exc:
            entry["resources_unreadable"] = f"{type(exc).__name__}: {exc}"
        for resources in usage.values():
            entry.update({k: v for k, v in resources.to_json().items() if k not in ("function", "source")})
        found.append(entry)
    return found


def _compile_failure(stderr: str, target: TritonTarget, code: int) -> str:
    refused = _UNSUPPORTED_RE.search(stderr)
    if refused:
        hygon = (f" {target.arch} is a Hygon DCU arch: upstream Triton has none of them "
                 f"({', '.join(sorted(HYGON_ARCHS))}); compile on the DCU with DTK's Triton, or check the nearest "
                 "upstream relative with --dcuopt-arch=gfx90a" if target.arch.split(":")[0] in HYGON_ARCHS else "")
        return f"Triton refused the target {target.label}: `unsupported target: '{refused.group(1)}'`.{hygon}"
    tail = "\n".join(line for line in stderr.strip().splitlines()[-25:])
    return f"the Triton AOT compile for {target.label} failed (exit {code}):\n{tail}"


def _env_note(env: dict[str, str | None]) -> str:
    ops = env.get("AMDGCN_USE_BUFFER_OPS")
    parts = [f"AMDGCN_USE_BUFFER_OPS={'unset (Triton default: on)' if ops is None else ops}"]
    parts += [f"{k}={v}" for k, v in env.items() if k in ("TRITON_DEFAULT_FP_FUSION",)]
    return ", ".join(parts)


def _kernel_note(function: str, kernel: dict[str, Any]) -> str:
    meta = kernel["metadata"]
    shown = {k: meta[k] for k in ("num_warps", "num_stages", "num_ctas", "shared", "warp_size") if k in meta}
    return (f"kernel {function}: {' '.join(f'{k}={v}' for k, v in shown.items())}; signature {kernel['signature']}; "
            f"constexprs {kernel['constexprs']}; attrs {kernel['attrs']}; stages {sorted(kernel['files'])}")


def _read_amdgcn(folder: Path, function: str, kernel: dict[str, Any], dump: IsaDump) -> None:
    files, shared = kernel["files"], kernel["metadata"].get("shared")
    if "hsaco" in files:
        blob = (folder / files["hsaco"]).read_bytes()
        try:
            found = amdgcn.metadata_resources(blob)
        except elf.ElfError as exc:
            found = {}
            dump.notes.append(f"{function}: hsaco metadata unreadable ({exc}); no register counts")
        for usage in found.values():
            dump.resources[function] = replace(usage, function=function, shared_bytes=shared,
                                               source="hsaco metadata note; shared from Triton metadata")
        text, tool = _objdump(folder / files["hsaco"], kernel["name"], dump.arch)
        if text:
            dump.functions[function] = text
            dump.tool += f"; {tool}"
            return
        reason = tool
    else:
        reason = "Triton wrote no hsaco"
    if "amdgcn" not in files:
        dump.errors.append(f"{function}: no AMDGCN ({reason}) and no `amdgcn` stage from Triton")
        return
    assembly = split_asm((folder / files["amdgcn"]).read_text())
    dump.functions[function] = assembly.get(kernel["name"]) or "\n".join(assembly.values())
    dump.notes.append(f"FALLBACK for {function}: {reason}. The ISA checked is Triton's own AMDGCN assembly "
                      f"({files['amdgcn']}) from the same compile, not a disassembly of the hsaco")
    if function not in dump.resources:
        dump.resources[function] = ResourceUsage(function, shared_bytes=shared, source="Triton metadata")


def _objdump(hsaco: Path, symbol: str, arch: str | None) -> tuple[str, str]:
    """(the kernel's disassembly, the command) from the first llvm-objdump that prints instructions for it;
    ("", why not) when none does."""
    tried = []
    for tool in llvm_objdumps():
        cpu = [f"--mcpu={arch}"] if arch else []
        result = run_tool([tool, "-d", "--triple=amdgcn-amd-amdhsa", *cpu, str(hsaco)], timeout=120)
        body = split_objdump(result.stdout).get(symbol, "") if result.ok else ""
        lines = body.splitlines()
        while lines and _PADDING_RE.match(lines[-1]):
            lines.pop()
        body = "\n".join(lines)
        if body and parse_amdgcn(body):
            return body, result.command_line
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()] or ["no output"]
        error = next((line for line in lines if "error" in line.lower()), lines[0])
        tried.append(f"{Path(tool).name}: " + (f"exit {result.returncode}: {error[-160:]}" if not result.ok
                                               else f"no instructions for {symbol}"))
    return "", ("no llvm-objdump here disassembles it (" + ("; ".join(tried) or
                "none found: install llvm-19, or set $" + LLVM_OBJDUMP_ENV) + ")")


def llvm_objdumps() -> list[str]:
    """Candidates, newest LLVM first: $DCUOPT_LLVM_OBJDUMP, ROCm/DTK's, llvm-objdump-N on PATH, llvm-objdump."""
    if os.environ.get(LLVM_OBJDUMP_ENV):
        found = which("llvm-objdump", LLVM_OBJDUMP_ENV)
        return [found] if found else []
    candidates = [p for p in install_roots("llvm/bin/llvm-objdump") if os.access(p, os.X_OK)]
    versioned = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        versioned += glob.glob(os.path.join(folder, "llvm-objdump-[0-9]*"))
    versioned.sort(key=lambda p: int(re.sub(r"\D", "", p.rsplit("-", 1)[-1]) or 0), reverse=True)
    plain = which("llvm-objdump")
    unique: dict[str, str] = {}  # one per real file (/bin and /usr/bin, llvm-objdump -> llvm-objdump-15)
    for tool in [*candidates, *versioned, *([plain] if plain else [])]:
        unique.setdefault(os.path.realpath(tool), tool)
    return list(unique.values())


def _read_sass(folder: Path, function: str, kernel: dict[str, Any], dump: IsaDump) -> None:
    files = kernel["files"]
    if "sass" not in files:
        dump.errors.append(f"{function}: no SASS (Triton's cuobjdump step failed; see the errors above)")
        return
    found = split_sass((folder / files["sass"]).read_text())
    dump.functions[function] = found.get(kernel["name"]) or "\n".join(found.values())
    if "resource-usage" in files:
        usage = parse_resource_usage((folder / files["resource-usage"]).read_text())
        for entry in usage.values():
            dump.resources[function] = replace(entry, function=function)

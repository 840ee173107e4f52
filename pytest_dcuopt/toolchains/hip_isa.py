"""Per-function ISA and resources of a hipcc-built shared object (see toolchains/hip.py).

Order: dccobjdump when DTK is installed, else llvm-objdump on the code object taken out of the
.so; if that fails or shows no instructions, the device assembly from `hipcc -save-temps`. Every
failure is kept in `IsaDump.errors` and every fallback in `IsaDump.notes`, so a verdict can say
which tool its evidence came from.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..external_tools import run_tool
from ..files import write_atomic
from ..isa import amdgcn, elf
from ..isa.dcu import run_dccobjdump, split_listing
from ..isa.functions import split_asm, split_objdump
from ..isa.instruction_lines import parse_amdgcn
from ..isa.model import IsaDump
from .hip_install import HIP_ENV, find_dccobjdump, find_llvm_objdump, save_temps_assembly

_PADDING_RE = re.compile(r"^\s*s_(?:nop 0|code_end)\b")

if TYPE_CHECKING:
    from .base import Artifact


class HipCompiler(Protocol):
    """What the ISA dump needs of the hip toolchain (hip.HipToolchain): its family per arch, its compiler's identity,
    and the command line of a build that keeps its device assembly."""

    def isa_family_for(self, arch: str | None) -> str: ...

    def identity(self) -> str: ...

    def save_temps_command(self, source: Path, arch: str, output: Path) -> list[str]: ...


def dump_hip_artifact(toolchain: HipCompiler, artifact: Artifact) -> IsaDump:
    dump = IsaDump(toolchain.isa_family_for(artifact.arch), artifact.arch, tool="")
    code_objects = _code_objects(artifact, dump)
    metadata = {}
    for blob in code_objects.values():
        try:
            metadata.update(amdgcn.metadata_resources(blob))
        except elf.ElfError as exc:
            dump.notes.append(f"code object metadata unreadable ({exc}); resources from the build remarks only")
    dump.resources = amdgcn.merge_resources(metadata, amdgcn.remark_resources(artifact.log))
    dcc = find_dccobjdump()
    if dcc is not None:
        _with_dccobjdump(dcc, artifact, dump)
    else:
        _with_llvm_objdump(find_llvm_objdump(toolchain.identity()), artifact, code_objects, dump)
    if not _instruction_count(dump):
        _with_save_temps(toolchain, artifact, dump)
    return dump


def _instruction_count(dump: IsaDump) -> int:
    return sum(len(parse_amdgcn(text)) for text in dump.functions.values())


def _code_objects(artifact: Artifact, dump: IsaDump) -> dict[str, bytes]:
    try:
        return amdgcn.code_objects(artifact.path.read_bytes(), artifact.arch)
    except (OSError, elf.ElfError) as exc:
        dump.errors.append(f"reading the code object out of {artifact.path} failed: {exc}")
        return {}


def _with_dccobjdump(tool: str, artifact: Artifact, dump: IsaDump) -> None:
    result, text = run_dccobjdump(tool, artifact.path, artifact.arch)
    dump.tool = result.command_line
    if not result.ok:
        dump.errors.append(f"dccobjdump failed (exit {result.returncode}): {result.stderr.strip()[-1500:]}")
    dump.functions = split_listing(text)
    if not _instruction_count(dump):
        dump.errors.append("dccobjdump printed no instructions (a known DTK behaviour for some code objects, "
                           "e.g. when it writes .ISA side files elsewhere or sees only the host ELF)")


def _with_llvm_objdump(tool: str | None, artifact: Artifact, code_objects: dict[str, bytes], dump: IsaDump) -> None:
    if tool is None:
        dump.errors.append("no llvm-objdump found (looked for $DCUOPT_LLVM_OBJDUMP, llvm-objdump-<hipcc's clang "
                           "version>, $ROCM_PATH/llvm/bin, /opt/dtk/llvm/bin, /opt/rocm/llvm/bin, PATH); install "
                           "llvm (e.g. `apt-get install llvm-15`)")
        return
    commands = []
    for triple, blob in code_objects.items():
        path = _persist(artifact.path.parent / f"kernel-{triple.rsplit('-', 1)[-1].replace(':', '_')}.co", blob)
        result = run_tool([tool, "-d", path], timeout=300)
        commands.append(result.command_line)
        if not result.ok:
            dump.errors.append(f"llvm-objdump failed (exit {result.returncode}): {result.stderr.strip()[-1500:]}")
            continue
        dump.functions.update({name: _trim_padding(body) for name, body in split_objdump(result.stdout).items()})
    dump.tool = "; ".join(commands)


def _with_save_temps(toolchain: HipCompiler, artifact: Artifact, dump: IsaDump) -> None:
    """The fallback: the device assembly that the same compiler and flags produce (`-save-temps`)."""
    assert artifact.arch is not None
    reason = dump.errors[-1] if dump.errors else "the disassembler produced no instructions"
    with tempfile.TemporaryDirectory(prefix="dcuopt_hip_save_temps_") as scratch:
        command = toolchain.save_temps_command(artifact.source.resolve(), artifact.arch, Path(scratch) / "kernel.so")
        result = run_tool(command, timeout=600, cwd=scratch, env=HIP_ENV)

        assembly = save_temps_assembly(Path(scratch), artifact.arch)
        if not result.ok or assembly is None:
            dump.errors.append(f"the -save-temps fallback failed too (exit {result.returncode}; "
                               f"{'no device .s was written' if assembly is None else 'see stderr'}): "
                               f"{result.stderr.strip()[-1500:]}")
            return
        kept = _persist(artifact.path.parent / assembly.name, assembly.read_bytes())
    text = kept.read_text(errors="replace")
    dump.functions = split_asm(text)
    dump.resources = amdgcn.merge_resources(dump.resources, amdgcn.asm_resources(dump.functions, text))
    dump.tool = (f"{dump.tool}; fallback: {result.command_line}" if dump.tool else f"fallback: {result.command_line}")
    dump.notes.append(f"FALLBACK: {reason}. The ISA checked here is the device assembly {kept.name} from "
                      "`hipcc -save-temps` with the same compiler and flags, not a disassembly of the built binary")
    dump.errors.clear()  # recovered: the failure is told in the note, and the ISA is complete


def _trim_padding(body: str) -> str:
    """Drop the `s_nop 0` fill the linker puts after a kernel's s_endpgm (code alignment, never executed)."""
    lines = body.splitlines()
    while lines and _PADDING_RE.match(lines[-1]):
        lines.pop()
    return "\n".join(lines)


def _persist(path: Path, data: bytes) -> Path:
    """Keep evidence beside the artifact in the build cache (atomic: concurrent workers may race)."""
    if path.exists() and path.stat().st_size == len(data):
        return path
    return write_atomic(path, data)


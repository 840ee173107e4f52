"""NVIDIA SASS and resource reports: split `cuobjdump --dump-sass` per function, parse resource usage.

Three text formats are read here, all produced without a GPU:

* `cuobjdump --dump-sass` (on a .so, .cubin or fatbin): one `Function : <mangled>` block per kernel,
  inside `Fatbin elf code` sections that name their `arch = sm_XX`.
* `cuobjdump --dump-resource-usage`: `Function <mangled>:` then `REG:22 STACK:0 SHARED:0 LOCAL:0 ...`.
  On sm_90 SHARED includes 1 KiB that the system reserves per block, so it is larger than ptxas's figure.
* `ptxas -v` (`nvcc -Xptxas -v`): `Function properties for <mangled>` (stack frame, spill stores/loads)
  followed by `Used N registers, used B barriers, S bytes smem`.

`ResourceUsage.spills` for NVIDIA is spill-store bytes plus spill-load bytes (0 = nothing spilled);
`scratch_bytes` is the per-thread stack frame (local memory).
"""
from __future__ import annotations

import re
from dataclasses import replace

from .functions import headed_sections
from .model import ResourceUsage

_FATBIN_ELF = re.compile(r"^Fatbin elf code:", re.M)
_ARCH = re.compile(r"^arch = (sm_\w+)", re.M)
_FUNCTION = re.compile(r"^\s*Function : (?P<name>\S+)\s*$", re.M)
_ENCODING_ONLY = re.compile(r"^\s*/\* 0x[0-9a-f]{16} \*/\s*$")
_TRAILING_ENCODING = re.compile(r"\s*/\* 0x[0-9a-f]{16} \*/\s*$")

_RU_FUNCTION = re.compile(r"^\s*Function (?P<name>\S+):\s*$")
_RU_FIELD = re.compile(r"(?P<key>[A-Z_]+(?:\[\d+\])?):(?P<value>\d+)")

_PTXAS_PROPS = re.compile(r"Function properties for (?P<name>\S+)")
_PTXAS_FRAME = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
                          r"(?P<loads>\d+) bytes spill loads")
_PTXAS_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_PTXAS_USED = re.compile(r"Used (?P<regs>\d+) registers(?:, used (?P<barriers>\d+) barriers)?(?P<rest>.*)")
_PTXAS_SMEM = re.compile(r"(?P<smem>\d+) bytes smem")


def split_sass(text: str, arch: str | None = None) -> dict[str, str]:
    """`cuobjdump --dump-sass` output -> {mangled function name: its instructions}.

    Encoding comments are dropped, so each line reads `/*00c0*/ LDG.E.128.CONSTANT R12, desc[UR4][R2.64] ;`.
    With `arch` (e.g. "sm_90") only that architecture's sections are kept; otherwise a name that occurs
    for a second architecture is keyed `name [sm_XX]`.
    """
    functions: dict[str, str] = {}
    for section_arch, section in _elf_sections(text):
        if arch is not None and section_arch not in (None, arch):
            continue
        for name, raw in headed_sections(_FUNCTION, section):
            if name in functions and section_arch:
                name = f"{name} [{section_arch}]"
            functions[name] = _clean_body(raw)
    return functions


def _elf_sections(text: str) -> list[tuple[str | None, str]]:
    starts = [m.start() for m in _FATBIN_ELF.finditer(text)]
    if not starts:  # a plain cubin dump has no fatbin headers
        found = _ARCH.search(text)
        return [(found.group(1) if found else _target_arch(text), text)]
    sections = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        chunk = text[start:end]
        found = _ARCH.search(chunk)
        sections.append((found.group(1) if found else None, chunk))
    return sections


def _target_arch(text: str) -> str | None:
    found = re.search(r"^\s*\.target\s+(sm_\w+)", text, re.M)
    return found.group(1) if found else None


def _clean_body(body: str) -> str:
    lines = []
    for line in body.splitlines():
        if not line.strip() or _ENCODING_ONLY.match(line):
            continue
        if line.lstrip().startswith("Fatbin ") or line.lstrip().startswith("=="):
            break  # the next fatbin section's header (no more instructions of this function)
        lines.append(_TRAILING_ENCODING.sub("", line).rstrip())
    return "\n".join(lines)


def instructions(sass: str) -> list[str]:
    """The opcode-and-operands text of each instruction (no address, no predicate guard stripped)."""
    found = []
    for line in sass.splitlines():
        match = re.match(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?P<ins>.+?)\s*;?\s*$", line)
        if match:
            found.append(match.group("ins").rstrip(" ;"))
    return found


def parse_resource_usage(text: str) -> dict[str, ResourceUsage]:
    """`cuobjdump --dump-resource-usage` -> {mangled name: ResourceUsage} (SHARED includes reserved smem)."""
    usage: dict[str, ResourceUsage] = {}
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _RU_FUNCTION.match(line)
        if not match or index + 1 >= len(lines):
            continue
        fields = {m.group("key"): int(m.group("value")) for m in _RU_FIELD.finditer(lines[index + 1])}
        if "REG" not in fields:
            continue
        name = match.group("name")
        usage[name] = ResourceUsage(function=name, registers=fields["REG"], shared_bytes=fields.get("SHARED"),
                                    scratch_bytes=fields.get("STACK", 0) + fields.get("LOCAL", 0),
                                    source="cuobjdump --dump-resource-usage")
    return usage


def parse_ptxas_verbose(text: str) -> dict[str, ResourceUsage]:
    """`ptxas -v` / `nvcc -Xptxas -v` stderr -> {mangled name: ResourceUsage}.

    ptxas prints, per entry function, a `Function properties for X` block (stack frame and spills) and a
    `Used N registers` line; both are merged. Device (non-entry) functions that only have properties are
    kept too, with registers None.
    """
    usage: dict[str, ResourceUsage] = {}
    current: str | None = None
    props_for: str | None = None
    for line in text.splitlines():
        entry = _PTXAS_ENTRY.search(line)
        if entry:
            current = entry.group("name")
            usage.setdefault(current, ResourceUsage(function=current, source="ptxas -v"))
            continue
        props = _PTXAS_PROPS.search(line)
        if props:
            props_for = props.group("name")
            usage.setdefault(props_for, ResourceUsage(function=props_for, source="ptxas -v"))
            continue
        frame = _PTXAS_FRAME.search(line)
        if frame and props_for is not None:
            usage[props_for] = replace(usage[props_for], scratch_bytes=int(frame.group("stack")),
                                       spills=int(frame.group("stores")) + int(frame.group("loads")))
            continue
        used = _PTXAS_USED.search(line)
        if used and current is not None:
            smem = _PTXAS_SMEM.search(used.group("rest"))
            usage[current] = replace(usage[current], registers=int(used.group("regs")),
                                     shared_bytes=int(smem.group("smem")) if smem else 0)
    return usage

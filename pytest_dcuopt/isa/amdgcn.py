"""AMDGCN (AMD and Hygon DCU) code objects: find them, and read their per-kernel resources.

Resources come from what the compiler itself wrote, never from guessing regexes over a dump:

* the code object's AMDGPU metadata note (`.vgpr_count`, `.sgpr_count`, `.agpr_count`,
  `.vgpr_spill_count`, `.sgpr_spill_count`, `.group_segment_fixed_size` = LDS,
  `.private_segment_fixed_size` = scratch),
* the `-Rpass-analysis=kernel-resource-usage` remarks in the build log (adds occupancy,
  and covers non-kernel device functions),
* for an assembly (.s) fallback, the `; Kernel info:` comment block the backend prints.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import elf
from .model import ResourceUsage

HSA_TRIPLE_RE = re.compile(r"amdgcn-amd-amdhsa-+(?P<target>gfx[0-9a-z]+(?::[a-z0-9_]+[+-])*)", re.I)
_REMARK_RE = re.compile(r"remark:\s+(?P<key>[A-Za-z][A-Za-z ]*?(?:\s\[[^\]]+\])?):\s+(?P<value>\S+)"
                        r"\s+\[-Rpass-analysis=kernel-resource-usage\]")
_ASM_INFO_RE = re.compile(r"^;\s*(?P<key>NumSgprs|NumVgprs|NumAgprs|ScratchSize|Occupancy|LDSByteSize)"
                          r":\s*(?P<value>\d+)", re.M)

# Remark key -> (ResourceUsage field, or a spill bucket).
_REMARK_FIELDS = {
    "VGPRs": "registers", "SGPRs": "sgprs", "AGPRs": "agprs", "ScratchSize [bytes/lane]": "scratch_bytes",
    "Occupancy [waves/SIMD]": "occupancy", "LDS Size [bytes/block]": "shared_bytes",
    "VGPRs Spill": "spill", "SGPRs Spill": "spill",
}
_ASM_FIELDS = {"NumVgprs": "registers", "NumSgprs": "sgprs", "NumAgprs": "agprs", "ScratchSize": "scratch_bytes",
               "Occupancy": "occupancy", "LDSByteSize": "shared_bytes"}


def processor(target: str) -> str:
    """`gfx90a:sramecc+:xnack-` -> `gfx90a`."""
    return target.split(":", 1)[0].strip().lower()


def code_objects(shared_object: bytes, arch: str | None) -> dict[str, bytes]:
    """{offload triple: AMDGPU code object} in a HIP shared object's `.hip_fatbin`, for `arch` (all when None)."""
    found = elf.sections(shared_object)
    if ".hip_fatbin" not in found:
        raise elf.ElfError("no .hip_fatbin section: the file holds no HIP device code (built without --offload-arch?)")
    bundle = elf.unbundle(found[".hip_fatbin"][1])
    picked = {}
    for triple, blob in bundle.items():
        match = HSA_TRIPLE_RE.search(triple)
        if match and blob and (arch is None or processor(match.group("target")) == processor(arch)):
            picked[triple] = blob
    if not picked:
        raise elf.ElfError(f"the offload bundle has no code object for {arch or 'any AMDGPU target'}; "
                           f"it holds: {', '.join(bundle) or 'nothing'}")
    return picked


def metadata_resources(code_object: bytes) -> dict[str, ResourceUsage]:
    """Per-kernel resources from the code object's AMDGPU metadata note."""
    kernels = elf.amdgpu_metadata(code_object).get("amdhsa.kernels") or []
    return {entry[".name"]: _from_metadata(entry) for entry in kernels
            if isinstance(entry, dict) and isinstance(entry.get(".name"), str)}


def _from_metadata(entry: Mapping[str, Any]) -> ResourceUsage:
    spills = [entry.get(k) for k in (".vgpr_spill_count", ".sgpr_spill_count")]
    return ResourceUsage(
        entry[".name"], registers=_int(entry.get(".vgpr_count")), sgprs=_int(entry.get(".sgpr_count")),
        agprs=_int(entry.get(".agpr_count")), shared_bytes=_int(entry.get(".group_segment_fixed_size")),
        scratch_bytes=_int(entry.get(".private_segment_fixed_size")),
        spills=sum(_int(s) or 0 for s in spills) if any(_int(s) is not None for s in spills) else None,
        source="code object metadata",
    )


def remark_resources(log: str) -> dict[str, ResourceUsage]:
    """Per-function resources from `-Rpass-analysis=kernel-resource-usage` remarks (clang >= 15, DTK dcc)."""
    found: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for match in _REMARK_RE.finditer(log):
        key, value = match.group("key").strip(), match.group("value")
        if key == "Function Name":
            current = found.setdefault(value, {})
        elif current is not None and key in _REMARK_FIELDS and _int(value) is not None:
            field = _REMARK_FIELDS[key]
            current[field] = current.get(field, 0) + _int(value) if field == "spill" else _int(value)
    return {name: ResourceUsage(name, spills=values.pop("spill", None), source="-Rpass-analysis remarks", **values)
            for name, values in found.items()}


def asm_resources(functions: Mapping[str, str], asm_text: str) -> dict[str, ResourceUsage]:
    """Resources from the `; Kernel info:` blocks of a .s file, matched to functions in file order."""
    blocks = re.split(r"^;\s*Kernel info:\s*$", asm_text, flags=re.M)[1:]
    found = {}
    # Not strict: only kernels get a `; Kernel info:` block, so device functions (and unparsable text) leave fewer
    # blocks than functions.
    for name, block in zip(functions, blocks, strict=False):
        values = {_ASM_FIELDS[m.group("key")]: int(m.group("value")) for m in _ASM_INFO_RE.finditer(block)}
        found[name] = ResourceUsage(name, source="assembly kernel info", **values)
    return found


def merge_resources(*sources: Mapping[str, ResourceUsage]) -> dict[str, ResourceUsage]:
    """Combine per-function resources: earlier sources win, later ones fill the gaps they leave."""
    merged: dict[str, ResourceUsage] = {}
    for source in sources:
        for name, usage in source.items():
            merged[name] = usage if name not in merged else _fill(merged[name], usage)
    return merged


def _fill(first: ResourceUsage, second: ResourceUsage) -> ResourceUsage:
    gaps = {k: v for k, v in second.__dict__.items() if k not in ("function", "source") and v is not None
            and getattr(first, k) is None}
    if not gaps:
        return first
    return replace(first, **gaps, source=f"{first.source} + {second.source}")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None

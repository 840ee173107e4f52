"""Register pressure of a built kernel: VGPR/SGPR/AGPR, LDS and scratch per function from the code object's metadata
and the compiler's resource remarks (the counts the ISA checks read, `isa.model.ResourceUsage`), and the occupancy
they allow for wave64.

The occupancy is the compiler's own (`Occupancy [waves/SIMD]` of `-Rpass-analysis=kernel-resource-usage`) when the
build printed it; otherwise it is estimated from the register counts with the register file of the arch's family
below, and says so. LDS limits occupancy per workgroup, which needs the launch's block size: the LDS bytes are
reported, not turned into waves.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..isa.model import ResourceUsage

WAVE_SIZE = 64


@dataclass(frozen=True)
class RegisterFile:
    """Per SIMD and lane, for wave64: how many VGPRs, in which allocation granule, SGPRs per SIMD, the wave cap."""

    vgprs: int
    vgpr_granule: int
    sgprs: int
    sgpr_granule: int
    max_waves: int
    unified_agprs: bool  # AGPRs come out of the same file as VGPRs (CDNA2/3)
    source: str


# GCN gfx9 (Vega, gfx906/gfx908 VGPRs): LLVM's AMDGPU backend (getTotalNumVGPRs 256, granule 4, 10 waves per SIMD,
# 800 SGPRs per SIMD, granule 16). CDNA2/CDNA3 (gfx90a, gfx94x): one 512-entry file for VGPRs and AGPRs, granule 8,
# 8 waves per SIMD. Hygon DCUs are gfx9 derivatives; their file sizes are not published here, so the gfx9 numbers
# are used and the result says it is an assumption.
GCN_GFX9 = RegisterFile(256, 4, 800, 16, 10, False, "gfx9 register file (256 VGPRs/lane, 800 SGPRs, 10 waves/SIMD)")
CDNA2 = RegisterFile(512, 8, 800, 16, 8, True, "CDNA2/3 register file (512 VGPRs+AGPRs/lane, 8 waves/SIMD)")
FILES_BY_PREFIX = {"gfx90a": CDNA2, "gfx94": CDNA2, "gfx95": CDNA2, "gfx9": GCN_GFX9}
HYGON_PREFIXES = ("gfx92", "gfx93")


def register_file(arch: str | None) -> tuple[RegisterFile | None, str]:
    """The register file of `arch` and a note ('' when it is the documented one)."""
    name = (arch or "").split(":", 1)[0].lower()
    for prefix in sorted(FILES_BY_PREFIX, key=len, reverse=True):
        if name.startswith(prefix):
            note = (f"{name}: a Hygon DCU; its register file is assumed to be the {GCN_GFX9.source}"
                    if name.startswith(HYGON_PREFIXES) else "")
            return FILES_BY_PREFIX[prefix], note
    return None, f"no wave64 register file known for arch {arch!r}"


def _granular(count: int, granule: int) -> int:
    return max(granule, -(-count // granule) * granule)


def estimated_waves(usage: ResourceUsage, file: RegisterFile) -> int | None:
    """Waves per SIMD the VGPR and SGPR counts allow (None without a VGPR count)."""
    if usage.registers is None:
        return None
    vgprs = usage.registers + ((usage.agprs or 0) if file.unified_agprs else 0)
    waves = min(file.max_waves, file.vgprs // _granular(max(vgprs, 1), file.vgpr_granule))
    if usage.sgprs is not None:
        waves = min(waves, file.sgprs // _granular(max(usage.sgprs, 1), file.sgpr_granule))
    return waves


def register_pressure(resources: Mapping[str, ResourceUsage], arch: str | None) -> dict[str, Any]:
    """Per function: the counts, the occupancy in waves per SIMD (the compiler's, else estimated) and the limit
    as a fraction of the file's wave cap. `{"functions": {}, "reason": ...}` when the build has no such counts."""
    if not resources:
        return {"functions": {}, "reason": "the build's ISA dump has no per-function register counts (x86 and "
                                           "interpreted kernels have none)"}
    file, note = register_file(arch)
    functions = {}
    for name, usage in sorted(resources.items()):
        entry: dict[str, Any] = {"vgprs": usage.registers, "agprs": usage.agprs, "sgprs": usage.sgprs,
                                 "lds_bytes": usage.shared_bytes, "scratch_bytes_per_lane": usage.scratch_bytes,
                                 "spills": usage.spills, "counts_from": usage.source}
        if usage.occupancy is not None:
            entry.update(waves_per_simd=usage.occupancy, occupancy_from="compiler remark (Occupancy [waves/SIMD])")
        elif file is not None and (waves := estimated_waves(usage, file)) is not None:
            entry.update(waves_per_simd=waves, occupancy_from=f"estimated from VGPR/SGPR counts, {file.source}")
        else:
            entry.update(waves_per_simd=None, occupancy_from=note or "no VGPR count")
        if file is not None and entry["waves_per_simd"] is not None:
            entry["occupancy_fraction"] = round(entry["waves_per_simd"] / file.max_waves, 3)
        functions[name] = {k: v for k, v in entry.items() if v is not None}
    found: dict[str, Any] = {"wave_size": WAVE_SIZE, "arch": arch, "functions": functions}
    if note:
        found["note"] = note
    if any(f.get("scratch_bytes_per_lane") for f in functions.values()):
        found["warning"] = "scratch (private memory) in use: registers spill or arrays live in memory"
    return found
